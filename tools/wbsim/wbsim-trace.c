/* wbsim's recorded completion traces: the nfskeys-wbtrace text format (as the kernel
 * sampler writes it) parsed strictly, every bad line refused with its number. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macros.h"
#include "wbsim-private.h"

/* ---------------------------------------------------------------- traces */

/* An unsigned decimal ending at a space or the end of the field: no sign, no
 * leading zeros beyond "0", no overflow. */
static const char *parse_u64(const char *p, uint64_t *ret)
{
	uint64_t v = 0;
	const char *start = p;

	if (*p < '0' || *p > '9')
		return NULL;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return NULL;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (*start == '0' && p - start > 1)
		return NULL;
	*ret = v;
	return p;
}

static int trace_parse_line(const char *line, struct trace_rec *r, uint64_t prev_t,
			    const char **ret_problem)
{
	static const char *const names[] = { "T_US", "OP", "OPS", "BYTES", "RTT_US", "EXEC_US",
					     "ERRORS" };
	static char problem[160];
	uint64_t v[7] = { 0 };
	const char *p = line, *q;

	if (!*line) {
		*ret_problem = "an empty line";
		return -EINVAL;
	}
	for (int f = 0; f < 7; f++) {
		if (f > 0) {
			if (*p != ' ') {
				if (*p)
					snprintf(problem, sizeof(problem), "%s: not a number",
						 names[f - 1]);
				else
					snprintf(problem, sizeof(problem),
						 "%d fields, want 7 (T_US OP OPS BYTES RTT_US "
						 "EXEC_US ERRORS)", f);
				*ret_problem = problem;
				return -EINVAL;
			}
			p++;
			if (*p == ' ') {
				*ret_problem = "two spaces in a row (fields are separated by one)";
				return -EINVAL;
			}
		}
		if (f == 1) {
			if (strncmp(p, "WRITE", 5) == 0 && (p[5] == ' ' || !p[5])) {
				r->op = TR_WRITE;
				p += 5;
			} else if (strncmp(p, "COMMIT", 6) == 0 && (p[6] == ' ' || !p[6])) {
				r->op = TR_COMMIT;
				p += 6;
			} else {
				*ret_problem = "OP: not WRITE or COMMIT";
				return -EINVAL;
			}
			continue;
		}
		q = parse_u64(p, &v[f]);
		if (!q || (*q && *q != ' ')) {
			bool big = !q && *p >= '0' && *p <= '9' && strspn(p, "0123456789") > 19;

			snprintf(problem, sizeof(problem), "%s: %s", names[f],
				 big ? "out of range" : "not an unsigned decimal number");
			*ret_problem = problem;
			return -EINVAL;
		}
		p = q;
	}
	if (*p) {
		*ret_problem = "more than 7 fields (or a trailing space)";
		return -EINVAL;
	}
	if (v[0] > UINT64_MAX / 1000) {
		*ret_problem = "T_US: out of range";
		return -EINVAL;
	}
	if (v[0] * 1000 < prev_t) {
		*ret_problem = "T_US goes backwards";
		return -EINVAL;
	}
	if (v[6] > v[2]) {
		*ret_problem = "ERRORS exceeds OPS";
		return -EINVAL;
	}
	if (v[2] == 0 && (v[3] || v[4] || v[5])) {
		*ret_problem = "BYTES, RTT_US or EXEC_US without OPS";
		return -EINVAL;
	}
	r->t = v[0] * 1000;
	r->ops = v[2];
	r->bytes = v[3];
	r->rtt_us = v[4];
	r->exec_us = v[5];
	r->errors = v[6];
	return 0;
}

/* Load a trace; on error print "wbsim: FILE:LINE: problem" and return -EINVAL. */
int wbsim_trace_load(const char *path, struct trace *tr)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	ssize_t len;
	int r = 0;

	memset(tr, 0, sizeof(*tr));
	if (!f) {
		fprintf(stderr, "wbsim: %s: %s\n", path, strerror(errno));
		return -errno;
	}
	while ((len = getline(&line, &cap, f)) >= 0) {
		const char *problem = NULL;
		struct trace_rec rec;

		lineno++;
		if (len > 0 && line[len - 1] == '\n')
			line[--len] = '\0';
		if ((size_t)len != strlen(line)) {
			problem = "a NUL byte";
		} else if (lineno == 1) {
			if (!streq(line, "# nfskeys-wbtrace 1"))
				problem = "not a trace: the first line must be '# nfskeys-wbtrace 1'";
		} else if (line[0] == '#') {
			continue;
		} else if (trace_parse_line(line, &rec, tr->n ? tr->rec[tr->n - 1].t : 0,
					    &problem) == 0) {
			struct trace_rec *n = realloc(tr->rec, (tr->n + 1) * sizeof(*n));

			if (!n) {
				r = -ENOMEM;
				fprintf(stderr, "wbsim: %s: out of memory\n", path);
				break;
			}
			tr->rec = n;
			tr->rec[tr->n++] = rec;
		}
		if (problem) {
			fprintf(stderr, "wbsim: %s:%zu: %s\n", path, lineno, problem);
			r = -EINVAL;
			break;
		}
	}
	if (!r && lineno == 0) {
		fprintf(stderr, "wbsim: %s:1: empty file, not a trace\n", path);
		r = -EINVAL;
	}
	if (!r && tr->n == 0) {
		fprintf(stderr, "wbsim: %s: no samples\n", path);
		r = -EINVAL;
	}
	free(line);
	fclose(f);
	if (r < 0) {
		free(tr->rec);
		tr->rec = NULL;
		tr->n = 0;
	}
	return r;
}
