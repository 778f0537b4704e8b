/* Scaffolding shared by the cmocka unit tests: a private temp directory per test, config
 * writers, contexts, log capture and a fresh session keyring.  Every helper asserts what
 * it needs (a failure fails the calling test, with the reason). */
#pragma once

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "nfskeys.h"

/* The current test directory, "/tmp/nfskeys-test-NAME.XXXXXX" after tu_dir_setup. */
extern char tu_dir[64];
/* The text of the last message a context made with tu_log_capture logged. */
extern char tu_last_log[1024];

/* cmocka setup/teardown bodies: make tu_dir (0 or -1), remove it with all it holds. */
int tu_dir_setup(const char *name);
int tu_dir_teardown(void);

/* "tu_dir/NAME" in BUF (asserts that it fits); returns BUF. */
char *tu_path(char *buf, size_t size, const char *name);
/* Write the formatted text to PATH (replacing it). */
void tu_write_file(const char *path, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Write tu_dir/nfskeys.conf; returns its path (static storage). */
const char *tu_write_conf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Log functions for nfskeys_ctx_new_full: drop everything, or keep the last message. */
void tu_log_quiet(void *u, int p, const char *f, int l, const char *fn, const char *fmt,
		  va_list ap);
void tu_log_capture(void *u, int p, const char *f, int l, const char *fn, const char *fmt,
		    va_list ap);

/* A context on tu_dir/nfskeys.conf written from the format (load must succeed). */
struct nfskeys_ctx *tu_ctx_conf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A context whose attribute store and attrd socket live in tu_dir. */
struct nfskeys_ctx *tu_ctx_attr(void);
/* A context on an empty configuration (/dev/null) logging through LOG (clears tu_last_log). */
struct nfskeys_ctx *tu_ctx_empty(nfskeys_log_fn log);

/* Join a fresh anonymous session keyring (so a test sees only its own keys); its serial,
 * or -1. */
int32_t tu_session_keyring(void);
