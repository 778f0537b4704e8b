/* The command line and key rules both request-key helpers share: the lean nfskeys-upcall
 * (libc and libkeyutils only, or nothing at all as a static PIE) and nfskeys-upcall-full
 * (with libnfskeys), which the lean one execs with the same arguments.  Header only, so
 * the lean helper keeps its link promise (tests/integration/idmap-lean.sh). */
#pragma once

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "units.h"

/* How long a helper waits for nfskeys-idmapd before resolving itself (ms), when
 * [Idmapd] Helper-Timeout is not set. */
#define UPCALL_DAEMON_TIMEOUT_MS 500

struct upcall_args {
	const char *config;  /* -c */
	const char *type;    /* -T: the key type when the key cannot be described */
	unsigned timeout;    /* -t, when have_timeout */
	bool have_timeout;
	bool verbose;        /* -v */
	bool no_daemon;      /* --no-daemon (set by the lean helper when it falls back) */
	int32_t serial;      /* KEY, > 0 */
	const char *desc;    /* DESCRIPTION */
	const char *bad;     /* with UPCALL_ARGS_BAD_*: the argument at fault */
};

enum {
	UPCALL_ARGS_BAD_TIMEOUT = -1, /* -t is not seconds (0..INT32_MAX; a unit allowed) */
	UPCALL_ARGS_BAD_COUNT = -2,   /* not exactly KEY DESCRIPTION */
	UPCALL_ARGS_BAD_SERIAL = -3,  /* KEY is not a key serial (1..INT32_MAX) */
};

/* s as a decimal number in 0..max (no sign, no blanks, nothing after it). */
static inline int upcall_parse_uint(const char *s, unsigned max, unsigned *ret)
{
	char *end;
	unsigned long v;

	if (!s || !*s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > max)
		return -EINVAL;
	*ret = (unsigned)v;
	return 0;
}

/* Parse [OPTIONS] KEY DESCRIPTION into a.  0: done; 'h', 'V', or '?' (an option getopt
 * did not accept): the caller's to handle (cli_std_option); UPCALL_ARGS_BAD_*: a->bad
 * names the argument at fault. */
static inline int upcall_args_parse(int argc, char *argv[], struct upcall_args *a)
{
	static const struct option opts[] = {
		{ "timeout", required_argument, NULL, 't' },
		{ "config", required_argument, NULL, 'c' },
		{ "type", required_argument, NULL, 'T' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "no-daemon", no_argument, NULL, 'N' },
		{}
	};
	unsigned serial;
	int c;

	*a = (struct upcall_args){};
	/* "+": options end at the first non-option (KEY), as POSIX says; GNU getopt would
	 * otherwise read a DESCRIPTION starting with '-' (the requester's text: "-c/tmp/x")
	 * as an option.  "--" ends them too. */
	while ((c = getopt_long(argc, argv, "+t:c:T:vhV", opts, NULL)) >= 0) {
		switch (c) {
		case 't': {
			/* seconds, as every nfskeys --timeout (and nfsidmap -t); a unit too */
			uint64_t v;

			if (units_parse_duration(optarg, 1000, &v, NULL) < 0 || v > INT32_MAX) {
				a->bad = optarg;
				return UPCALL_ARGS_BAD_TIMEOUT;
			}
			a->timeout = (unsigned)v;
			a->have_timeout = true;
			break;
		}
		case 'c':
			a->config = optarg;
			break;
		case 'T':
			a->type = optarg;
			break;
		case 'v':
			a->verbose = true;
			break;
		case 'N':
			a->no_daemon = true;
			break;
		default: /* 'h', 'V', '?' */
			return c;
		}
	}
	if (argc - optind != 2)
		return UPCALL_ARGS_BAD_COUNT;
	if (upcall_parse_uint(argv[optind], INT32_MAX, &serial) < 0 || serial == 0) {
		a->bad = argv[optind];
		return UPCALL_ARGS_BAD_SERIAL;
	}
	a->serial = (int32_t)serial;
	a->desc = argv[optind + 1];
	return 0;
}

/* The kernel's private keyring for a key type (possessing it lets the helper change the
 * type's keys after instantiating them), or NULL. */
static inline const char *upcall_private_keyring(const char *type)
{
	if (!strcmp(type, "id_resolver"))
		return ".id_resolver";
	if (!strcmp(type, "cifs.idmap"))
		return ".cifs_idmap";
	return NULL;
}

/* The key timeout for an answer with its own TTL: -t replaces a good answer's TTL; a
 * nobody answer keeps its short TTL whatever -t says (-t may only shorten it). */
static inline unsigned upcall_key_ttl(const struct upcall_args *a, unsigned answer_ttl,
				      bool nobody)
{
	if (a->have_timeout && !nobody)
		return a->timeout;
	if (a->have_timeout && a->timeout < answer_ttl)
		return a->timeout;
	return answer_ttl;
}
