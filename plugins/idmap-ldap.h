/* The ldap backend's configuration ([LDAP], idmap-ldap-conf.c), read once at init. */
#pragma once

#include "idmap-util.h"

struct ldap_conf {
	char *uri, *user_base, *group_base, *bind_dn, *bind_pw_file, *ca_file;
	char *nfs_attr, *uid_attr, *uidnum_attr, *gidnum_attr, *group_attr, *member_attr;
	char *user_class, *group_class; /* objectClass of users and groups */
	char *name_domain;		/* "" or the @domain of id -> name answers */
	char *keytab, *principal;	/* of the GSSAPI bind */
	bool ad;     /* Schema = ad: Active Directory's names and classes by default */
	enum {
		LDAP_GROUPS_MEMBER_UID,	  /* the groups whose Member-Attr is the user's name */
		LDAP_GROUPS_TOKEN_GROUPS, /* AD: the user's tokenGroups, else as below */
		LDAP_GROUPS_MEMBER,	  /* AD: member, nested (LDAP_MATCHING_RULE_IN_CHAIN) */
	} groups;			  /* Group-Membership */
	bool gssapi; /* SASL-Mech = GSSAPI */
	bool start_tls, allow_cleartext_bind;
	bool unique_ids; /* the admin vouches: no two entries share a uidNumber/gidNumber */
	bool unique_names; /* ... and no two entries answer one name (user/group, NFSv4) */
	int timeout, search_timeout, backoff_max, pool_size;
	unsigned no_strip; /* IDMAP_NO_STRIP_* bits of [Translation] No-Strip */
};

/* Read [LDAP] into c (zeroed by the caller): 0, or -errno with the problem logged.  On
 * failure what was read is freed by ldap_conf_free() all the same. */
int ldap_conf_read(struct nfskeys_ctx *ctx, struct ldap_conf *c);
void ldap_conf_free(struct ldap_conf *c);
