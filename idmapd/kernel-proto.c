/* knfsd cache-channel lines and rpc_pipefs idmap messages: parsing and formatting, no I/O
 * (doc/KERNEL-INTERFACES.md §1-2).  The kernel is trusted to be the kernel, but a channel or a
 * pipe can be written by any root process, so nothing here assumes a well-formed input. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel-proto.h"

_Static_assert(sizeof(struct idmap_msg) == IDMAP_MSG_SIZE, "struct idmap_msg is 140 bytes");

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Take the next space-separated field of line[*pos..len) into buf, decoded exactly as the
 * kernel's qword_get decodes the reply we write back: \ooo (first digit 0-3) is one byte,
 * any other backslash is itself, a field opening with \x is hex.  The kernel's qword_add
 * escapes only '\\', ' ', '\n' and '\t', so other control bytes arrive raw.  A byte
 * the daemon will not look up (a control byte, a backslash qword_add would have escaped, a
 * hex field) sets *odd to the reason, the field is still taken: the request is answered
 * (negative) with the field echoed.  -EINVAL only when no answer can match the kernel's
 * entry: a missing field, a NUL (the kernel's fields are C strings) or one too long. */
static int field_take(const char *line, size_t len, size_t *pos, char *buf, size_t size,
		      const char **odd, const char **ret_why)
{
	size_t i = *pos, n = 0;
	bool hex = false;

	while (i < len && line[i] == ' ')
		i++;
	if (i >= len || line[i] == '\n') {
		*ret_why = "missing field";
		return -EINVAL;
	}
	if (i + 1 < len && line[i] == '\\' && line[i + 1] == 'x') {
		hex = true;
		i += 2;
		if (!*odd)
			*odd = "hex-encoded field";
	}
	for (; i < len && line[i] != ' ' && line[i] != '\n'; i++) {
		unsigned char c = (unsigned char)line[i];

		if (hex) {
			int h = hex_digit(line[i]), l = i + 1 < len ? hex_digit(line[i + 1]) : -1;

			if (h < 0 || l < 0) {
				*ret_why = "bad hex field";
				return -EINVAL;
			}
			c = (unsigned char)(h << 4 | l);
			i++;
		} else if (c == '\\' && i + 3 < len && line[i + 1] >= '0' && line[i + 1] <= '3' &&
			   line[i + 2] >= '0' && line[i + 2] <= '7' && line[i + 3] >= '0' &&
			   line[i + 3] <= '7') {
			c = (unsigned char)(((line[i + 1] - '0') << 6) | ((line[i + 2] - '0') << 3) |
					    (line[i + 3] - '0'));
			i += 3;
		} else if (c == '\\' && !*odd) {
			*odd = "bad escape (not \\ooo)";
		}
		if (c == '\0') {
			*ret_why = "NUL in field";
			return -EINVAL;
		}
		if ((c < 0x20 || c == 0x7f) && !*odd)
			*odd = "control byte in field";
		if (n + 1 >= size) {
			*ret_why = "field too long";
			return -EINVAL;
		}
		buf[n++] = (char)c;
	}
	buf[n] = '\0';
	*pos = i;
	return 0;
}

static int parse_u32(const char *s, uint32_t *ret)
{
	uint64_t v = 0;

	/* decimal as the kernel prints "%u": no sign, no leading zero but for "0" */
	if (!*s || (s[0] == '0' && s[1]))
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		v = v * 10 + (uint64_t)(*s - '0');
		if (v > UINT32_MAX)
			return -EINVAL;
	}
	*ret = (uint32_t)v;
	return 0;
}

int knfsd_parse_request(enum knfsd_channel channel, const char *line, size_t len,
			struct knfsd_request *ret, const char **ret_why)
{
	struct knfsd_request r = { .channel = channel };
	char type[8], last[KNFSD_FIELD_MAX];
	const char *odd = NULL;
	size_t pos = 0;
	int e;

	*ret_why = NULL;
	if (len == 0 || line[len - 1] != '\n') {
		*ret_why = "not one whole line";
		return -EINVAL;
	}
	if (memchr(line, '\n', len) != line + len - 1) {
		*ret_why = "more than one line";
		return -EINVAL;
	}
	e = field_take(line, len, &pos, r.authname, sizeof(r.authname), &odd, ret_why);
	if (e)
		return e;
	e = field_take(line, len, &pos, type, sizeof(type), &odd, ret_why);
	if (e) {
		if (!strcmp(*ret_why, "field too long"))
			*ret_why = "type is neither user nor group";
		return e;
	}
	/* the kernel writes only these two; any other word would be read back as "group",
	 * a key nobody asked for */
	if (!strcmp(type, "group"))
		r.group = true;
	else if (strcmp(type, "user")) {
		*ret_why = "type is neither user nor group";
		return -EINVAL;
	}
	e = field_take(line, len, &pos, last, sizeof(last), &odd, ret_why);
	if (e)
		return e;
	while (pos < len && line[pos] == ' ')
		pos++;
	if (line[pos] != '\n') {
		*ret_why = "extra field after the request";
		return -EINVAL;
	}
	if (channel == KNFSD_IDTONAME) {
		if (parse_u32(last, &r.id)) {
			*ret_why = "id is not a decimal 32-bit number";
			return -EINVAL;
		}
	} else {
		memcpy(r.name, last, sizeof(r.name));
	}
	*ret = r;
	if (odd) {
		*ret_why = odd;
		return KNFSD_REQUEST_REFUSED;
	}
	return 0;
}

int knfsd_escape_field(const char *field, char *buf, size_t size)
{
	size_t n = 0;

	for (const unsigned char *p = (const unsigned char *)field; *p; p++) {
		bool esc = *p == '\\' || *p == ' ' || *p < 0x20 || *p == 0x7f;
		size_t need = esc ? 4 : 1;

		if (n + need >= size)
			return -ENOBUFS;
		if (esc) {
			snprintf(buf + n, 5, "\\%03o", *p);
		} else {
			buf[n] = (char)*p;
		}
		n += need;
	}
	if (n >= size)
		return -ENOBUFS;
	buf[n] = '\0';
	return (int)n;
}

/* Append field (escaped) and a space to buf at *n. */
static int put_field(const char *field, char *buf, size_t size, size_t *n)
{
	int r;

	if (*n >= size)
		return -ENOBUFS;
	r = knfsd_escape_field(field, buf + *n, size - *n);
	if (r < 0)
		return r;
	*n += (size_t)r;
	if (*n + 1 >= size)
		return -ENOBUFS;
	buf[(*n)++] = ' ';
	buf[*n] = '\0';
	return 0;
}

int knfsd_format_reply(const struct knfsd_request *req, int64_t expiry, bool negative,
		       const char *name, uint32_t id, char *buf, size_t size)
{
	char num[24], exp[24];
	size_t n = 0;
	int r;

	if (expiry <= 0)
		return -EINVAL; /* the kernel's get_expiry refuses 0 and negative values */
	if (!negative && req->channel == KNFSD_IDTONAME &&
	    (!name || !*name || strlen(name) >= KNFSD_FIELD_MAX))
		return -EINVAL;
	snprintf(exp, sizeof(exp), "%" PRId64, expiry);
	r = put_field(req->authname, buf, size, &n);
	if (!r)
		r = put_field(req->group ? "group" : "user", buf, size, &n);
	if (!r && req->channel == KNFSD_IDTONAME) {
		snprintf(num, sizeof(num), "%" PRIu32, req->id);
		r = put_field(num, buf, size, &n);
	} else if (!r) {
		r = put_field(req->name, buf, size, &n);
	}
	if (!r)
		r = put_field(exp, buf, size, &n);
	if (!r && !negative) {
		if (req->channel == KNFSD_IDTONAME) {
			r = put_field(name, buf, size, &n);
		} else {
			snprintf(num, sizeof(num), "%" PRIu32, id);
			r = put_field(num, buf, size, &n);
		}
	}
	if (r)
		return r;
	buf[n - 1] = '\n'; /* the last field's space */
	return (int)n;
}

int pipe_parse_request(const void *msg, size_t len, struct pipe_request *ret,
		       const char **ret_why)
{
	struct idmap_msg im;
	struct pipe_request r = { 0 };
	size_t nlen;

	*ret_why = NULL;
	if (len != sizeof(im)) {
		*ret_why = "message is not 140 bytes";
		return -EINVAL;
	}
	memcpy(&im, msg, sizeof(im));
	if (im.im_type != IDMAP_TYPE_USER && im.im_type != IDMAP_TYPE_GROUP) {
		*ret_why = "im_type is neither user nor group";
		return -EINVAL;
	}
	if (im.im_conv != IDMAP_CONV_IDTONAME && im.im_conv != IDMAP_CONV_NAMETOID) {
		*ret_why = "im_conv is neither idtoname nor nametoid";
		return -EINVAL;
	}
	r.group = im.im_type == IDMAP_TYPE_GROUP;
	r.name_to_id = im.im_conv == IDMAP_CONV_NAMETOID;
	if (r.name_to_id) {
		nlen = strnlen(im.im_name, sizeof(im.im_name));
		if (nlen == sizeof(im.im_name)) {
			*ret_why = "im_name is not NUL-terminated";
			return -EINVAL;
		}
		if (nlen == 0) {
			*ret_why = "im_name is empty";
			return -EINVAL;
		}
		for (size_t i = 0; i < nlen; i++) {
			unsigned char c = (unsigned char)im.im_name[i];

			if (c < 0x20 || c == 0x7f) {
				*ret_why = "control byte in im_name";
				return -EINVAL;
			}
		}
		memcpy(r.name, im.im_name, nlen + 1);
	} else {
		r.id = im.im_id;
	}
	*ret = r;
	return 0;
}

int pipe_format_reply(const struct pipe_request *req, bool ok, const char *name, uint32_t id,
		      struct idmap_msg *ret)
{
	struct idmap_msg im;

	memset(&im, 0, sizeof(im));
	im.im_type = req->group ? IDMAP_TYPE_GROUP : IDMAP_TYPE_USER;
	im.im_conv = req->name_to_id ? IDMAP_CONV_NAMETOID : IDMAP_CONV_IDTONAME;
	if (req->name_to_id) {
		/* the kernel matches the name it sent (strcmp) and stores the id */
		memcpy(im.im_name, req->name, strnlen(req->name, sizeof(req->name) - 1));
		im.im_id = id;
	} else {
		size_t nlen = name ? strlen(name) : 0;

		/* the kernel matches the id and needs a name of 1..127 bytes */
		if (ok && (nlen == 0 || nlen >= sizeof(im.im_name)))
			return -EINVAL;
		if (ok)
			memcpy(im.im_name, name, nlen);
		im.im_id = req->id;
	}
	im.im_status = ok ? IDMAP_STATUS_SUCCESS : IDMAP_STATUS_LOOKUPFAIL;
	*ret = im;
	return 0;
}

/* ---------------------------------------------------------------- user namespace maps */

int userns_map_parse(const char *text, size_t len, struct userns_map *m, const char **why)
{
	const char *p = text, *end = text + len;

	m->n = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		unsigned long long v[3];
		char line[96], *q;

		if (le - p >= (long)sizeof(line)) {
			*why = "a line too long";
			return -EINVAL;
		}
		memcpy(line, p, (size_t)(le - p));
		line[le - p] = '\0';
		p = nl ? nl + 1 : end;
		q = line;
		while (*q == ' ')
			q++;
		if (!*q)
			continue;
		for (int i = 0; i < 3; i++) {
			char *e;

			while (*q == ' ')
				q++;
			if (!isdigit((unsigned char)*q)) {
				*why = "not three numbers";
				return -EINVAL;
			}
			errno = 0;
			v[i] = strtoull(q, &e, 10);
			if (errno || v[i] > UINT32_MAX) {
				*why = "a number out of range";
				return -EINVAL;
			}
			q = e;
		}
		while (*q == ' ')
			q++;
		if (*q) {
			*why = "more than three fields";
			return -EINVAL;
		}
		if (v[2] == 0 || v[0] + v[2] - 1 > UINT32_MAX || v[1] + v[2] - 1 > UINT32_MAX) {
			*why = "an empty or overflowing range";
			return -EINVAL;
		}
		if (m->n == USERNS_MAP_MAX) {
			*why = "more lines than the kernel takes";
			return -EINVAL;
		}
		m->r[m->n].inside = (uint32_t)v[0];
		m->r[m->n].outside = (uint32_t)v[1];
		m->r[m->n].count = (uint32_t)v[2];
		m->n++;
	}
	return 0;
}

bool userns_map_to_outside(const struct userns_map *m, uint32_t id, uint32_t *ret)
{
	for (unsigned i = 0; i < m->n; i++)
		if (id >= m->r[i].inside && id - m->r[i].inside < m->r[i].count) {
			*ret = m->r[i].outside + (id - m->r[i].inside);
			return true;
		}
	return false;
}

bool userns_map_to_inside(const struct userns_map *m, uint32_t id, uint32_t *ret)
{
	for (unsigned i = 0; i < m->n; i++)
		if (id >= m->r[i].outside && id - m->r[i].outside < m->r[i].count) {
			*ret = m->r[i].inside + (id - m->r[i].outside);
			return true;
		}
	return false;
}
