/* NFSv4 ID-mapping domain discovery, in the order admins know from nfs-utils:
 * [General] Domain, then the DNS TXT record _nfsv4idmapdomain.<dns domain>, then the
 * host's DNS domain, then "localdomain".  A configured domain keeps its case (it is what
 * reverse mappings print); comparisons are case-insensitive.  DNS goes through glibc's resolver with a short
 * bound so a dead name server cannot stall an upcall. */
#include <arpa/nameser.h>
#include <ctype.h>
#include <netdb.h>
#include <resolv.h>
#undef MIN /* sys/param.h; macros.h has its own */
#undef MAX

#include "idmap-private.h"

static void lowercase(char *s)
{
	for (; *s; s++)
		*s = (char)tolower((unsigned char)*s);
}

static bool domain_valid(const char *d)
{
	if (!*d || strlen(d) > 253)
		return false;
	for (; *d; d++)
		if (!isalnum((unsigned char)*d) && !strchr("-._", *d))
			return false;
	return true;
}

int idmap_dns_txt_domain(const char *dnsdomain, char *buf, size_t size)
{
	struct __res_state st;
	unsigned char ans[1024];
	char qname[300];
	const unsigned char *p, *end;
	unsigned qd, an;
	int len, r = -ENOENT;

	if (snprintf(qname, sizeof(qname), "_nfsv4idmapdomain.%s", dnsdomain) >= (int)sizeof(qname))
		return -EINVAL;
	memset(&st, 0, sizeof(st));
	if (res_ninit(&st) < 0)
		return -EIO;
	st.retrans = 1;
	st.retry = 1;
	len = res_nquery(&st, qname, ns_c_in, ns_t_txt, ans, sizeof(ans));
	res_nclose(&st);
	if (len < HFIXEDSZ)
		return -ENOENT;
	end = ans + len;
	qd = (unsigned)(ans[4] << 8 | ans[5]);
	an = (unsigned)(ans[6] << 8 | ans[7]);
	p = ans + HFIXEDSZ;
	for (unsigned i = 0; i < qd; i++) {
		int n = dn_skipname(p, end);

		if (n < 0 || p + n + QFIXEDSZ > end)
			return -EBADMSG;
		p += n + QFIXEDSZ;
	}
	for (unsigned i = 0; i < an; i++) {
		int n = dn_skipname(p, end);
		unsigned type, rdlen;

		if (n < 0 || p + n + RRFIXEDSZ > end)
			return -EBADMSG;
		p += n;
		type = (unsigned)(p[0] << 8 | p[1]);
		rdlen = (unsigned)(p[8] << 8 | p[9]);
		p += RRFIXEDSZ;
		if (p + rdlen > end)
			return -EBADMSG;
		if (type == ns_t_txt && rdlen > 1 && p[0] > 0 && p[0] < rdlen &&
		    (size_t)p[0] < size) {
			memcpy(buf, p + 1, p[0]);
			buf[p[0]] = '\0';
			lowercase(buf);
			if (domain_valid(buf))
				return 0;
			r = -EBADMSG;
		}
		p += rdlen;
	}
	return r;
}

/* The DNS domain of this host: the part of its canonical name after the first dot. */
static int host_dns_domain(char *buf, size_t size)
{
	struct addrinfo hints = { .ai_flags = AI_CANONNAME }, *ai = NULL;
	char host[256];
	const char *dot = NULL;
	int r = -ENOENT;

	if (gethostname(host, sizeof(host) - 1) < 0)
		return negerrno();
	host[sizeof(host) - 1] = '\0';
	dot = strchr(host, '.');
	if (!dot && getaddrinfo(host, NULL, &hints, &ai) == 0 && ai && ai->ai_canonname) {
		dot = strchr(ai->ai_canonname, '.');
		if (dot && strlen(dot + 1) < sizeof(host)) {
			memmove(host, dot + 1, strlen(dot + 1) + 1);
			dot = host - 1;
		} else {
			dot = NULL;
		}
	}
	if (ai)
		freeaddrinfo(ai);
	if (dot && dot[1] && strlen(dot + 1) < size) {
		snprintf(buf, size, "%s", dot + 1);
		lowercase(buf);
		r = domain_valid(buf) ? 0 : -ENOENT;
	}
	return r;
}

int idmap_discover_domain(struct nfskeys_ctx *ctx, char *buf, size_t size,
			  const char **ret_source)
{
	const char *conf = nfskeys_conf_get(ctx, "General", "Domain");
	char hostdom[256];

	if (conf && *conf) {
		if (strlen(conf) >= size)
			return -ENAMETOOLONG;
		snprintf(buf, size, "%s", conf);
		*ret_source = "config";
		return 0;
	}
	if (host_dns_domain(hostdom, sizeof(hostdom)) == 0) {
		if (idmap_dns_txt_domain(hostdom, buf, size) == 0) {
			*ret_source = "dns-txt";
			return 0;
		}
		snprintf(buf, size, "%s", hostdom);
		*ret_source = "hostname";
		return 0;
	}
	snprintf(buf, size, "localdomain");
	*ret_source = "default";
	log_debug(ctx, "idmap: no DNS domain for this host; NFSv4 domain 'localdomain'");
	return 0;
}
