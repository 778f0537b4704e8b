/* What the credential commands share: cmd-cred.c (cifs, afs) and cmd-cred-nfs.c (nfs).
 * Private to those two files. */
#pragma once

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "nfskeys-tool.h"

/* A parsed command line: nfskeys FS VERB [OPTIONS] [OPERANDS]; the state the table's
 * handlers get. */
struct cred_args {
	struct nfskeys_ctx *ctx;
	const struct cli_sub *sub; /* the verb's row */
	const char *verb;	   /* its name (an alias turned into it) */
	struct nfskeys_cred_params p;
	const char *domain;
	const char *print; /* non-NULL: given */
	const char *json;  /* non-NULL: --json given (cifs list, afs list) */
	bool renew;	   /* nfs login --renew */
	char **operands;
	int n_operands;
};

/* One command's own options: getopt's tables (without -h/--help and --user-keyring,
 * which parse_cred_args adds) and, per option letter, the string in struct cred_args its
 * value goes to (an option without value stores "").  -t/--timeout means the same in
 * every command that has it. */
struct cred_syntax {
	const char *shortopts;
	const struct option *longopts;
	bool user_keyring; /* the command takes --user-keyring */
	struct {
		int c;
		size_t offset;
	} args[3];
	void (*usage)(FILE *f);
	const char *fs;
	const struct cli_sub *subs;
};
#define CRED_ARG(c, field) { c, offsetof(struct cred_args, field) }
#define CRED_OPTS_MAX 8
/* a long option without a letter (nfs login --renew) */
#define OPT_RENEW 0x100

/* The library names the problem when it logs an error; then the command adds nothing. */
extern bool cred_logged_error;

int lib_error(const char *what, const char *target, int r);
int read_password(const char *prompt, struct nfskeys_secret **ret);
void usage_common_options(FILE *f, int width, bool user_keyring);
int parse_cred_args(struct nfskeys_ctx *ctx, const struct cred_syntax *syn, int argc,
		    char *argv[], struct cred_args *a);
