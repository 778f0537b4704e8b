/* JSON for nfsattr: a recursive-descent reader with a depth limit and positioned error
 * messages, and string output with the escapes RFC 8259 requires. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nfsattr-json.h"

#define DEPTH_MAX 32

struct parser {
	const char *s, *p;
	char *err;
	size_t errlen;
	int depth;
};

__attribute__((format(printf, 2, 3))) static int perr(struct parser *ps, const char *fmt, ...)
{
	int line = 1, col = 1;
	size_t n;
	va_list ap;

	for (const char *q = ps->s; q < ps->p; q++) {
		if (*q == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	if (ps->err && ps->errlen) {
		n = (size_t)snprintf(ps->err, ps->errlen, "line %d column %d: ", line, col);
		if (n < ps->errlen) {
			va_start(ap, fmt);
			vsnprintf(ps->err + n, ps->errlen - n, fmt, ap);
			va_end(ap);
		}
	}
	return -EINVAL;
}

static void skip_ws(struct parser *ps)
{
	while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
		ps->p++;
}

void json_free(struct json *j)
{
	if (!j)
		return;
	free(j->str);
	for (size_t i = 0; i < j->n; i++) {
		json_free(j->items[i]);
		if (j->keys)
			free(j->keys[i]);
	}
	free(j->items);
	free(j->keys);
	free(j);
}

static int hex4(const char *p, unsigned *ret)
{
	unsigned v = 0;

	for (int i = 0; i < 4; i++) {
		char c = p[i];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return -EINVAL;
	}
	*ret = v;
	return 0;
}

static size_t put_utf8(char *out, unsigned cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

static int parse_string(struct parser *ps, char **ret)
{
	const char *q = ps->p + 1;
	size_t cap = 16, len = 0;
	char *out = malloc(cap);

	if (!out)
		return -ENOMEM;
	for (;;) {
		unsigned char c = (unsigned char)*q;
		if (len + 8 > cap) {
			char *n = realloc(out, cap *= 2);
			if (!n) {
				free(out);
				return -ENOMEM;
			}
			out = n;
		}
		if (c == '"')
			break;
		if (c == '\0') {
			free(out);
			ps->p = q;
			return perr(ps, "unterminated string");
		}
		if (c < 0x20) {
			free(out);
			ps->p = q;
			return perr(ps, "control character in string");
		}
		if (c != '\\') {
			out[len++] = (char)c;
			q++;
			continue;
		}
		q++;
		switch (*q) {
		case '"': case '\\': case '/':
			out[len++] = *q;
			break;
		case 'b': out[len++] = '\b'; break;
		case 'f': out[len++] = '\f'; break;
		case 'n': out[len++] = '\n'; break;
		case 'r': out[len++] = '\r'; break;
		case 't': out[len++] = '\t'; break;
		case 'u': {
			unsigned cp, lo;
			if (hex4(q + 1, &cp) < 0)
				goto bad_escape;
			q += 4;
			if (cp >= 0xd800 && cp < 0xdc00) {
				if (q[1] != '\\' || q[2] != 'u' || hex4(q + 3, &lo) < 0 ||
				    lo < 0xdc00 || lo >= 0xe000)
					goto bad_escape;
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				q += 6;
			} else if (cp >= 0xdc00 && cp < 0xe000) {
				goto bad_escape;
			}
			if (cp == 0)
				goto bad_escape; /* no NULs inside our strings */
			len += put_utf8(out + len, cp);
			break;
		}
		default:
			goto bad_escape;
		}
		q++;
	}
	out[len] = '\0';
	ps->p = q + 1;
	*ret = out;
	return 0;
bad_escape:
	free(out);
	ps->p = q;
	return perr(ps, "bad escape in string");
}

static int parse_value(struct parser *ps, struct json **ret);

static int add_item(struct json *j, char *key, struct json *v)
{
	struct json **items = realloc(j->items, (j->n + 1) * sizeof(*items));

	if (!items)
		return -ENOMEM;
	j->items = items;
	if (j->type == JSON_OBJECT) {
		char **keys = realloc(j->keys, (j->n + 1) * sizeof(*keys));
		if (!keys)
			return -ENOMEM;
		j->keys = keys;
		j->keys[j->n] = key;
	}
	j->items[j->n++] = v;
	return 0;
}

static int parse_container(struct parser *ps, struct json *j, char close)
{
	int r;

	ps->p++;
	skip_ws(ps);
	if (*ps->p == close) {
		ps->p++;
		return 0;
	}
	for (;;) {
		char *key = NULL;
		struct json *v = NULL;

		skip_ws(ps);
		if (j->type == JSON_OBJECT) {
			if (*ps->p != '"')
				return perr(ps, "expected a string key");
			r = parse_string(ps, &key);
			if (r < 0)
				return r;
			skip_ws(ps);
			if (*ps->p != ':') {
				free(key);
				return perr(ps, "expected ':'");
			}
			ps->p++;
		}
		r = parse_value(ps, &v);
		if (r < 0) {
			free(key);
			return r;
		}
		r = add_item(j, key, v);
		if (r < 0) {
			free(key);
			json_free(v);
			return r;
		}
		skip_ws(ps);
		if (*ps->p == ',') {
			ps->p++;
			continue;
		}
		if (*ps->p == close) {
			ps->p++;
			return 0;
		}
		return perr(ps, "expected ',' or '%c'", close);
	}
}

static int parse_value(struct parser *ps, struct json **ret)
{
	struct json *j;
	int r = 0;

	skip_ws(ps);
	if (++ps->depth > DEPTH_MAX)
		return perr(ps, "nested too deeply");
	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	switch (*ps->p) {
	case '{':
		j->type = JSON_OBJECT;
		r = parse_container(ps, j, '}');
		break;
	case '[':
		j->type = JSON_ARRAY;
		r = parse_container(ps, j, ']');
		break;
	case '"':
		j->type = JSON_STRING;
		r = parse_string(ps, &j->str);
		break;
	case 't':
	case 'f':
	case 'n': {
		static const char *const lits[] = { "true", "false", "null" };
		bool found = false;
		for (int i = 0; i < 3; i++) {
			if (strncmp(ps->p, lits[i], strlen(lits[i])) == 0) {
				j->type = i == 2 ? JSON_NULL : JSON_BOOL;
				j->b = i == 0;
				ps->p += strlen(lits[i]);
				found = true;
			}
		}
		if (!found)
			r = perr(ps, "unexpected word");
		break;
	}
	default:
		if (*ps->p == '-' || (*ps->p >= '0' && *ps->p <= '9')) {
			char *end;
			j->type = JSON_NUMBER;
			j->num = strtod(ps->p, &end);
			if (end == ps->p)
				r = perr(ps, "bad number");
			ps->p = end;
		} else if (*ps->p == '\0') {
			r = perr(ps, "unexpected end of input");
		} else {
			r = perr(ps, "unexpected character '%c'", *ps->p);
		}
	}
	ps->depth--;
	if (r < 0) {
		json_free(j);
		return r;
	}
	*ret = j;
	return 0;
}

int json_parse(const char *text, struct json **ret, char *err, size_t errlen)
{
	struct parser ps = { .s = text, .p = text, .err = err, .errlen = errlen };
	struct json *j = NULL;
	int r;

	r = parse_value(&ps, &j);
	if (r < 0)
		return r;
	skip_ws(&ps);
	if (*ps.p) {
		json_free(j);
		return perr(&ps, "trailing characters after the document");
	}
	*ret = j;
	return 0;
}

const struct json *json_get(const struct json *j, const char *key)
{
	if (!j || j->type != JSON_OBJECT)
		return NULL;
	for (size_t i = 0; i < j->n; i++)
		if (strcmp(j->keys[i], key) == 0)
			return j->items[i];
	return NULL;
}

void json_print_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}
