/* What the kernel writes to nfskeys-idmapd and what it accepts back, without any I/O:
 * knfsd's nfs4.idtoname / nfs4.nametoid cache-channel lines and the NFS client's
 * rpc_pipefs idmap messages (doc/KERNEL-INTERFACES.md §1-2).  Every field the kernel hands
 * over is checked; a malformed one is refused with a reason that names it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/nfs_idmap.h>

/* ---------------------------------------------------------------- knfsd channels */

enum knfsd_channel { KNFSD_IDTONAME, KNFSD_NAMETOID };

/* The kernel's entry fields: authname and name are char[IDMAP_NAMESZ] there. */
#define KNFSD_FIELD_MAX IDMAP_NAMESZ
/* A request is three short fields; a reply at most five (the kernel takes < 32768). */
#define KNFSD_LINE_MAX 1024

struct knfsd_request {
	enum knfsd_channel channel;
	bool group;                     /* "group"; "user" otherwise */
	char authname[KNFSD_FIELD_MAX]; /* echoed back: part of the kernel's key */
	char name[KNFSD_FIELD_MAX];     /* nametoid: the owner string */
	uint32_t id;                    /* idtoname */
};

/* knfsd_parse_request(): a whole request whose fields the daemon will not look up. */
#define KNFSD_REQUEST_REFUSED 1

/* Parse one request line ("<authname> <user|group> <id|name>\n", fields escaped as
 * qword_add does, decoded as qword_get decodes our reply).  0: look it up.
 * KNFSD_REQUEST_REFUSED: *ret holds the request and *ret_why (static text) names the odd
 * field (a control byte, a stray backslash, a hex field); answer it negative at once, so
 * that no nfsd thread waits on it.  -EINVAL with *ret_why: no reply can match the kernel's
 * entry (not a whole line, a field missing, extra, too long or with a NUL, a type other
 * than user or group, an id that is not a decimal 32-bit number). */
int knfsd_parse_request(enum knfsd_channel channel, const char *line, size_t len,
			struct knfsd_request *ret, const char **ret_why);

/* The reply line for req: a positive entry with name (idtoname) or id (nametoid), or a
 * negative one when negative is true.  expiry is absolute wall-clock seconds.  Returns the
 * line's length (it ends in '\n'); -ENOBUFS when size is too small; -EINVAL for a name
 * the kernel would refuse (empty or >= 128 bytes). */
int knfsd_format_reply(const struct knfsd_request *req, int64_t expiry, bool negative,
		       const char *name, uint32_t id, char *buf, size_t size);

/* Escape one field as the kernel's qword_add does, plus every other control byte, so that
 * a line logged or written stays one line.  Returns the length; -ENOBUFS. */
int knfsd_escape_field(const char *field, char *buf, size_t size);

/* ---------------------------------------------------------------- rpc_pipefs idmap */

#define IDMAP_MSG_SIZE 140 /* sizeof(struct idmap_msg) on every Linux ABI we build for */

struct pipe_request {
	bool group;      /* IDMAP_TYPE_GROUP */
	bool name_to_id; /* IDMAP_CONV_NAMETOID */
	char name[IDMAP_NAMESZ];
	uint32_t id;
};

/* Parse one message read from a clnt*\/idmap pipe.  0; -EINVAL with *ret_why. */
int pipe_parse_request(const void *msg, size_t len, struct pipe_request *ret,
		       const char **ret_why);

/* The 140-byte reply to req: a success carrying name (id -> name) or id (name -> id),
 * echoing the request's other fields as the kernel matches them; a failure when ok is
 * false (the kernel then negates the key).  -EINVAL for a name the kernel would refuse. */
int pipe_format_reply(const struct pipe_request *req, bool ok, const char *name, uint32_t id,
		      struct idmap_msg *ret);

/* A user namespace's uid_map or gid_map as /proc/PID/uid_map shows it to the reader: lines
 * "INSIDE OUTSIDE COUNT" (user_namespaces(7)), at most USERNS_MAP_MAX of them. */
#define USERNS_MAP_MAX 340
struct userns_map {
	unsigned n;
	struct {
		uint32_t inside, outside, count;
	} r[USERNS_MAP_MAX];
};
/* Parse the text of such a file; -EINVAL (why says what) on a line that is not one. */
int userns_map_parse(const char *text, size_t len, struct userns_map *m, const char **why);
/* An inside id as the reader's (false: outside the map). */
bool userns_map_to_outside(const struct userns_map *m, uint32_t id, uint32_t *ret);
/* An outside id as the namespace sees it (false: outside the map; the kernel then shows
 * the overflow id). */
bool userns_map_to_inside(const struct userns_map *m, uint32_t id, uint32_t *ret);
