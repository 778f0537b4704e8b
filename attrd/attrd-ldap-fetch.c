/* One fleet sync's conversation with the directory, in the worker thread: connect (TLS and
 * the bind are common/ldap-tls.c's), then either learn that nothing changed since the last
 * good sync, or read every nfskeysDirectoryPolicy entry below LDAP-Base.
 *
 * How "nothing changed" is learnt: a first search with the same base, scope and filter
 * asks only for each entry's change stamp (entryCSN, which OpenLDAP keeps to the
 * microsecond with a per-change counter; modifyTimestamp, which RFC 4512 servers keep to
 * the second, for the others; entryCSN alone when the last full read found it on every
 * entry).  The count of entries and an order-independent digest of
 * every entry's (DN, stamp) are compared with those of the last good sync: equal means
 * unchanged, and the policy attributes are not read again.  An addition or a deletion
 * changes the count or the digest, a modification the entry's stamp, a rename its DN.
 * This works on any LDAP server, needs no overlay (RFC 4533 content synchronization would
 * need syncprov on every server of the fleet, and its contextCSN is per database: any
 * change elsewhere in the database would start a present phase listing every entry
 * anyway).  What it cannot see: a second change to one entry within the same second as
 * the first when only modifyTimestamp is kept and the full read fell between the two; a
 * change of the bind DN's access rights that hides or shows attribute values; a server
 * that keeps neither stamp (then every entry lacks one, the mark is never valid, and every
 * sync is a full read: the "unchanged" count stays 0). */
#include <fcntl.h>
#include <ldap.h>

#include "attrd-ldap-private.h"
#include "ldap-tls.h"
#include "macros.h"
/* after macros.h: <rpc/rpc.h> redefines MIN/MAX in its system header */
#include "attr.h"

struct ldap_tls attrd_ldap_tls(const struct settings *s)
{
	return (struct ldap_tls){ .uri = s->uri, .ca_file = s->ca_file,
				  .start_tls = s->start_tls, .section = "[Attrd] ",
				  .key_prefix = "LDAP-" };
}

static char *keep(struct result *res, const char *s, size_t n)
{
	char **ns = realloc(res->strings, (res->nstrings + 1) * sizeof(*ns));
	char *c;

	if (!ns)
		return NULL;
	res->strings = ns;
	c = strndup(s, n);
	if (c)
		res->strings[res->nstrings++] = c;
	return c;
}

static int add_row(struct result *res, const char *domain, const char *path, const char *kv,
		   size_t kvlen)
{
	const char *eq = memchr(kv, '=', kvlen);
	struct attr_sync_row *nr;
	char *k, *v;

	if (!eq)
		return -EINVAL;
	k = keep(res, kv, (size_t)(eq - kv));
	v = keep(res, eq + 1, kvlen - (size_t)(eq - kv) - 1);
	if (!k || !v)
		return -ENOMEM;
	nr = realloc(res->rows, (res->n + 1) * sizeof(*nr));
	if (!nr)
		return -ENOMEM;
	res->rows = nr;
	res->rows[res->n++] = (struct attr_sync_row){ domain, path, k, v };
	return 0;
}

static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

/* Count entry e into m: its DN with its entryCSN, else modifyTimestamp.  Each entry's
 * hash is mixed (the splitmix64 finalizer) and summed, so the order the server sends the
 * entries in does not matter.  An entry with no stamp makes m invalid. */
static void mark_add(struct sync_mark *m, LDAP *ld, LDAPMessage *e)
{
	struct berval **st = ldap_get_values_len(ld, e, "entryCSN");
	char *dn = ldap_get_dn(ld, e);
	uint64_t h = 0xcbf29ce484222325ULL;

	if (!st || !st[0]) {
		ldap_value_free_len(st);
		st = ldap_get_values_len(ld, e, "modifyTimestamp");
		m->all_csn = false;
	}
	m->entries++;
	if (!dn || !st || !st[0]) {
		m->valid = false;
	} else {
		h = fnv1a(h, dn, strlen(dn) + 1);
		h = fnv1a(h, st[0]->bv_val, st[0]->bv_len);
		h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
		h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
		m->digest += h ^ (h >> 31);
	}
	ldap_memfree(dn);
	ldap_value_free_len(st);
}

/* The rows of one entry of the full read. */
static void take_entry(struct result *res, LDAP *ld, LDAPMessage *e)
{
	struct berval **dom = ldap_get_values_len(ld, e, "nfskeysDomain");
	struct berval **path = ldap_get_values_len(ld, e, "nfskeysPath");
	struct berval **kvs = ldap_get_values_len(ld, e, "nfskeysAttribute");
	char *d = NULL, *p = NULL;

	if (dom && dom[0] && path && path[0]) {
		d = keep(res, dom[0]->bv_val, dom[0]->bv_len);
		p = keep(res, path[0]->bv_val, path[0]->bv_len);
	}
	for (size_t i = 0; d && p && kvs && kvs[i]; i++)
		if (add_row(res, d, p, kvs[i]->bv_val, kvs[i]->bv_len) == -ENOMEM)
			res->error = -ENOMEM;
	ldap_value_free_len(dom);
	ldap_value_free_len(path);
	ldap_value_free_len(kvs);
}

/* Bind as [Attrd] LDAP-Bind-DN: the LDAP result code; when the password cannot be read,
 * res->error and res->msg say why (and the code is meaningless). */
static int do_bind(struct result *res, LDAP *ld, const struct settings *s)
{
	/* Read into a secret buffer (wiped, and the process made non-dumpable), not through
	 * stdio, whose buffer would keep a copy in freed heap. */
	struct nfskeys_secret *pw = NULL;
	struct berval cred = { .bv_val = (char *)"", .bv_len = 0 };
	int fd = s->pw_file ? open(s->pw_file, O_RDONLY | O_CLOEXEC | O_NOCTTY) : -1;
	int rc;

	if (s->pw_file && fd < 0) {
		snprintf(res->msg, sizeof(res->msg), "cannot read LDAP-Bind-Password-File: %m");
		res->error = -EACCES;
		return LDAP_OTHER;
	}
	if (fd >= 0) {
		int r = nfskeys_secret_read_password(fd, NULL, 511, &pw);

		close(fd);
		if (r < 0 && r != -ENODATA) {
			snprintf(res->msg, sizeof(res->msg),
				 "cannot read LDAP-Bind-Password-File: %s", strerror(-r));
			res->error = r;
			return LDAP_OTHER;
		}
	}
	if (pw) {
		cred.bv_val = nfskeys_secret_data(pw);
		cred.bv_len = nfskeys_secret_len(pw);
	}
	rc = ldap_sasl_bind_s(ld, s->bind_dn, LDAP_SASL_SIMPLE, &cred, NULL, NULL, NULL);
	nfskeys_secret_free(pw);
	return rc;
}

void ldap_fetch(struct result *res, const struct settings *s, const struct sync_mark *last)
{
	static const char filter[] = "(objectClass=nfskeysDirectoryPolicy)";
	static char *stamps[] = { "entryCSN", "modifyTimestamp", NULL };
	static char *csn[] = { "entryCSN", NULL };
	static char *full[] = { "nfskeysDomain", "nfskeysPath", "nfskeysAttribute",
				"entryCSN", "modifyTimestamp", NULL };
	struct timeval tv = { .tv_sec = s->timeout };
	struct ldap_tls tls = attrd_ldap_tls(s);
	const char *step = "initialize";
	LDAP *ld = NULL;
	LDAPMessage *msg = NULL;
	int v3 = LDAP_VERSION3, rc;

	rc = ldap_initialize(&ld, s->uri);
	if (rc != LDAP_SUCCESS)
		goto fail;
	ldap_set_option(ld, LDAP_OPT_PROTOCOL_VERSION, &v3);
	ldap_set_option(ld, LDAP_OPT_NETWORK_TIMEOUT, &tv);
	ldap_set_option(ld, LDAP_OPT_TIMEOUT, &tv);
	ldap_set_option(ld, LDAP_OPT_REFERRALS, LDAP_OPT_OFF);
	/* the certificate is always checked; a failed StartTLS never falls back to plain
	 * LDAP: the sync fails and the last good copy stays */
	step = s->start_tls ? "StartTLS" : "connect";
	rc = ldap_tls_setup(ld, &tls);
	if (rc != LDAP_SUCCESS)
		goto fail;
	if (s->bind_dn) {
		step = "bind";
		rc = do_bind(res, ld, s);
		if (res->error < 0)
			goto out;
		if (rc != LDAP_SUCCESS)
			goto fail;
	}
	if (last->valid) {
		/* the cheap search: names and stamps only */
		step = "search";
		res->mark = (struct sync_mark){ .valid = true, .all_csn = true };
		rc = ldap_search_ext_s(ld, s->base, LDAP_SCOPE_SUBTREE, filter,
				       last->all_csn ? csn : stamps, 0, NULL, NULL, &tv, 0, &msg);
		if (rc != LDAP_SUCCESS)
			goto fail;
		for (LDAPMessage *e = ldap_first_entry(ld, msg); e; e = ldap_next_entry(ld, e))
			mark_add(&res->mark, ld, e);
		ldap_msgfree(msg);
		msg = NULL;
		if (res->mark.valid && res->mark.entries == last->entries &&
		    res->mark.digest == last->digest) {
			res->unchanged = true;
			goto out;
		}
	}
	/* the full read, with the stamps of what it reads: the next sync compares with
	 * exactly this */
	step = "search";
	res->mark = (struct sync_mark){ .valid = true, .all_csn = true };
	rc = ldap_search_ext_s(ld, s->base, LDAP_SCOPE_SUBTREE, filter, full, 0, NULL, NULL, &tv,
			       0, &msg);
	if (rc != LDAP_SUCCESS)
		goto fail;
	for (LDAPMessage *e = ldap_first_entry(ld, msg); e; e = ldap_next_entry(ld, e)) {
		mark_add(&res->mark, ld, e);
		take_entry(res, ld, e);
	}
	goto out;
fail:
	ldap_tls_error(&tls, ld, step, rc, res->msg, sizeof(res->msg));
	res->error = rc == LDAP_SERVER_DOWN || rc == LDAP_TIMEOUT || rc == LDAP_CONNECT_ERROR ?
			     -EHOSTDOWN : -EIO;
out:
	ldap_msgfree(msg);
	if (ld)
		ldap_unbind_ext_s(ld, NULL, NULL);
}
