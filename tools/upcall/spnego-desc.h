/* The description the kernel's CIFS client gives a cifs.spnego key, parsed strictly: the
 * request-key helper treats it as untrusted (any local user can request a key of a type
 * the kernel does not guard), so every field is checked and a duplicate refused. */
#pragma once

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>

#define SPNEGO_DESC_VERSION 2     /* CIFS_SPNEGO_UPCALL_VERSION since 2.6.3x */
#define SPNEGO_DESC_MAX 4095      /* the kernel's longest key description */
#define SPNEGO_HOST_MAX 255       /* a host name, an IPv4 or IPv6 literal */
#define SPNEGO_USER_MAX 256       /* the CIFS client's username limit */
#define SPNEGO_UNKNOWN_MAX 16     /* fields of later kernels we skip, at most this many */
#define SPNEGO_UNKNOWN_VALUE_MAX 1024

enum spnego_sec {
	SPNEGO_SEC_KRB5 = 1,
	SPNEGO_SEC_MSKRB5,
	SPNEGO_SEC_IAKERB,
};

enum spnego_target {
	SPNEGO_TARGET_UNSPECIFIED = 0, /* kernels before upcall_target= (6.1 among them) */
	SPNEGO_TARGET_MOUNT,
	SPNEGO_TARGET_APP,
};

struct spnego_desc {
	unsigned version;
	char host[SPNEGO_HOST_MAX + 1];
	int family;                    /* AF_INET or AF_INET6 */
	union {
		struct in_addr v4;
		struct in6_addr v6;
	} addr;
	enum spnego_sec sec;
	uint32_t uid;                  /* the mount's owner (uid=) */
	uint32_t creduid;              /* whose credentials to use (creduid=) */
	uint32_t pid;
	bool have_user;
	char user[SPNEGO_USER_MAX + 1];
	enum spnego_target target;
	unsigned unknown;              /* fields skipped (names of later kernels) */
};

/* Parse desc into ret; 0, or -EINVAL with *reason (a static string) saying what is
 * wrong.  ret is written on success only. */
int spnego_desc_parse(const char *desc, struct spnego_desc *ret, const char **reason);

/* "krb5", "mskrb5", "iakerb" */
const char *spnego_sec_name(enum spnego_sec sec);
