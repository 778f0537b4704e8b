/* [LDAP] of the ldap backend (idmap-ldap.h). */
#include <strings.h>

#include "conf-get.h"
#include "idmap-ldap.h"

static char *conf_dup(struct nfskeys_ctx *ctx, const char *key, const char *def)
{
	const char *v = nfskeys_conf_get(ctx, "LDAP", key);

	return strdup(v && *v ? v : def);
}

void ldap_conf_free(struct ldap_conf *c)
{
	char **all[] = { &c->uri,	   &c->user_base,   &c->group_base,  &c->bind_dn,
			 &c->bind_pw_file, &c->ca_file,	    &c->nfs_attr,    &c->uid_attr,
			 &c->uidnum_attr,  &c->gidnum_attr, &c->group_attr,  &c->member_attr,
			 &c->user_class,   &c->group_class, &c->name_domain, &c->keytab,
			 &c->principal };

	for (size_t i = 0; i < ARRAY_SIZE(all); i++) {
		free(*all[i]);
		*all[i] = NULL;
	}
}

static int conf_bool(struct nfskeys_ctx *ctx, const char *key, bool *ret)
{
	bool b;
	int r = nfskeys_conf_get_bool(ctx, "LDAP", key, &b);

	if (r == 0)
		*ret = b;
	else if (r != -ENOENT) {
		plog(ctx, LOG_ERR, "[LDAP] %s = %s: expected yes or no", key,
		     nfskeys_conf_get(ctx, "LDAP", key));
		return -EINVAL;
	}
	return 0;
}

/* Schema, SASL-Mech and Group-Membership: the words they take, told apart from typos */
static int conf_words(struct nfskeys_ctx *ctx, struct ldap_conf *c)
{
	const char *schema = nfskeys_conf_get(ctx, "LDAP", "Schema");
	const char *mech = nfskeys_conf_get(ctx, "LDAP", "SASL-Mech");
	const char *gm = nfskeys_conf_get(ctx, "LDAP", "Group-Membership");

	if (schema && *schema && !strcaseeq(schema, "rfc2307") && !strcaseeq(schema, "ad")) {
		plog(ctx, LOG_ERR, "[LDAP] Schema = %s: expected rfc2307 or ad", schema);
		return -EINVAL;
	}
	c->ad = schema && strcaseeq(schema, "ad");
	if (mech && *mech && !strcaseeq(mech, "GSSAPI")) {
		plog(ctx, LOG_ERR, "[LDAP] SASL-Mech = %s: only GSSAPI is supported", mech);
		return -EINVAL;
	}
	c->gssapi = mech && *mech;
	if (!gm || !*gm)
		c->groups = c->ad ? LDAP_GROUPS_TOKEN_GROUPS : LDAP_GROUPS_MEMBER_UID;
	else if (strcaseeq(gm, "member-uid"))
		c->groups = LDAP_GROUPS_MEMBER_UID;
	else if (strcaseeq(gm, "token-groups"))
		c->groups = LDAP_GROUPS_TOKEN_GROUPS;
	else if (strcaseeq(gm, "member"))
		c->groups = LDAP_GROUPS_MEMBER;
	else {
		plog(ctx, LOG_ERR,
		     "[LDAP] Group-Membership = %s: expected token-groups, member or member-uid",
		     gm);
		return -EINVAL;
	}
	if (c->gssapi && nfskeys_conf_get(ctx, "LDAP", "Bind-DN")) {
		plog(ctx, LOG_ERR,
		     "[LDAP] SASL-Mech = GSSAPI binds as the keytab's principal: "
		     "remove Bind-DN (and Bind-Password-File)");
		return -EINVAL;
	}
	return 0;
}

int ldap_conf_read(struct nfskeys_ctx *ctx, struct ldap_conf *c)
{
	const char *base = nfskeys_conf_get(ctx, "LDAP", "Base");
	char why[256];
	int r;

	if (!nfskeys_conf_get(ctx, "LDAP", "URI") || !base) {
		plog(ctx, LOG_ERR, "[LDAP] URI and Base must be set for the ldap backend");
		return -EINVAL;
	}
	r = conf_words(ctx, c);
	if (r < 0)
		return r;
	c->uri = conf_dup(ctx, "URI", "");
	c->user_base = conf_dup(ctx, "User-Base", base);
	c->group_base = conf_dup(ctx, "Group-Base", base);
	c->bind_dn = conf_dup(ctx, "Bind-DN", "");
	c->bind_pw_file = conf_dup(ctx, "Bind-Password-File", "");
	c->ca_file = conf_dup(ctx, "CA-File", "");
	c->nfs_attr = conf_dup(ctx, "NFSv4-Name-Attr", "NFSv4Name");
	/* AD: the logon name (sAMAccountName) for users and groups alike */
	c->uid_attr = conf_dup(ctx, "User-Name-Attr", c->ad ? "sAMAccountName" : "uid");
	c->uidnum_attr = conf_dup(ctx, "UID-Number-Attr", "uidNumber");
	c->gidnum_attr = conf_dup(ctx, "GID-Number-Attr", "gidNumber");
	c->group_attr = conf_dup(ctx, "Group-Name-Attr", c->ad ? "sAMAccountName" : "cn");
	c->member_attr = conf_dup(ctx, "Member-Attr", "memberUid");
	c->user_class = conf_dup(ctx, "User-Object-Class", c->ad ? "user" : "posixAccount");
	c->group_class = conf_dup(ctx, "Group-Object-Class", c->ad ? "group" : "posixGroup");
	c->name_domain = conf_dup(ctx, "Name-Domain", "");
	c->keytab = conf_dup(ctx, "Keytab", "");
	c->principal = conf_dup(ctx, "Principal", "");
	if (!c->uri || !c->user_base || !c->group_base || !c->bind_dn || !c->bind_pw_file ||
	    !c->ca_file || !c->nfs_attr || !c->uid_attr || !c->uidnum_attr || !c->gidnum_attr ||
	    !c->group_attr || !c->member_attr || !c->user_class || !c->group_class ||
	    !c->name_domain || !c->keytab || !c->principal)
		return -ENOMEM;
	if (strchr(c->name_domain, '@')) {
		plog(ctx, LOG_ERR, "[LDAP] Name-Domain = %s: a domain, without '@'",
		     c->name_domain);
		return -EINVAL;
	}
	/* (the schema check of the file refuses other values of these two already) */
	(void)conf_bool(ctx, "StartTLS", &c->start_tls);
	(void)conf_bool(ctx, "Allow-Cleartext-Bind", &c->allow_cleartext_bind);
	if ((r = conf_bool(ctx, "Unique-Ids", &c->unique_ids)) < 0)
		return r;
	if ((r = conf_bool(ctx, "Unique-Names", &c->unique_names)) < 0)
		return r;
	/* durations and numbers of the schema (common/conf-schema.c: bounds, default) */
	if ((r = conf_get_int(ctx, "LDAP", "Timeout", &c->timeout, why, sizeof(why))) < 0 ||
	    (r = conf_get_int(ctx, "LDAP", "Search-Timeout", &c->search_timeout, why,
			      sizeof(why))) < 0 ||
	    (r = conf_get_int(ctx, "LDAP", "Backoff-Max", &c->backoff_max, why, sizeof(why))) < 0 ||
	    (r = conf_get_int(ctx, "LDAP", "Pool-Size", &c->pool_size, why, sizeof(why))) < 0) {
		plog(ctx, LOG_ERR, "%s", why);
		return r;
	}
	return util_no_strip(ctx, &c->no_strip);
}
