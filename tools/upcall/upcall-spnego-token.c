/* The cifs.spnego upcall's token: a krb5 AP-REQ for cifs/<host> made through GSSAPI from
 * the user's credential, its session key (the initiator's subkey) kept in an
 * nfskeys_secret, and the SPNEGO NegTokenInit (RFC 4178) wrapped around it in DER. */
#include <grp.h>
#include <gssapi/gssapi.h>
#include <gssapi/gssapi_ext.h>
#include <gssapi/gssapi_krb5.h>
#include <inttypes.h>
#include <krb5.h>
#include <netdb.h>
#include <pwd.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <syslog.h>


#include "conf-get.h"
#include "macros.h"
#include "nfskeys.h"
#include "spnego-desc.h"
#include "upcall-spnego-private.h"

static const uint8_t oid_spnego[] = { 0x06, 0x06, 0x2b, 0x06, 0x01, 0x05, 0x05, 0x02 };

/* ------------------------------------------------------------ DER for the NegTokenInit */

static size_t der_len_size(size_t len)
{
	return len < 0x80 ? 1 : len < 0x100 ? 2 : len < 0x10000 ? 3 : 4;
}

static uint8_t *der_put_hdr(uint8_t *p, uint8_t tag, size_t len)
{
	*p++ = tag;
	if (len < 0x80) {
		*p++ = (uint8_t)len;
	} else if (len < 0x100) {
		*p++ = 0x81;
		*p++ = (uint8_t)len;
	} else if (len < 0x10000) {
		*p++ = 0x82;
		*p++ = (uint8_t)(len >> 8);
		*p++ = (uint8_t)len;
	} else {
		*p++ = 0x83;
		*p++ = (uint8_t)(len >> 16);
		*p++ = (uint8_t)(len >> 8);
		*p++ = (uint8_t)len;
	}
	return p;
}

#define TLV(len) (1 + der_len_size(len) + (len))

/* The SPNEGO initial context token (RFC 4178): [APPLICATION 0] { spnego OID,
 * [0] NegTokenInit { [0] mechTypes { oid }, [2] mechToken OCTET STRING } }, the form
 * cifs.upcall sends with the krb5 AP-REQ token as the optimistic mechanism token. */
int spnego_wrap(const uint8_t *oid, size_t oid_len, const void *tok, size_t tok_len,
		       uint8_t **ret, size_t *ret_len)
{
	size_t mechlist, mechtypes, octets, mechtoken, seq, nti, inner, total;
	uint8_t *buf, *p;

	if (tok_len > 0xffff00)
		return -E2BIG;
	mechlist = TLV(oid_len);
	mechtypes = TLV(mechlist);
	octets = TLV(tok_len);
	mechtoken = TLV(octets);
	seq = TLV(mechtypes + mechtoken);
	nti = TLV(seq);
	inner = sizeof(oid_spnego) + nti;
	total = TLV(inner);
	buf = malloc(total);
	if (!buf)
		return -ENOMEM;
	p = der_put_hdr(buf, 0x60, inner);
	memcpy(p, oid_spnego, sizeof(oid_spnego));
	p += sizeof(oid_spnego);
	p = der_put_hdr(p, 0xa0, seq);
	p = der_put_hdr(p, 0x30, mechtypes + mechtoken);
	p = der_put_hdr(p, 0xa0, mechlist);
	p = der_put_hdr(p, 0x30, oid_len);
	memcpy(p, oid, oid_len);
	p += oid_len;
	p = der_put_hdr(p, 0xa2, octets);
	p = der_put_hdr(p, 0x04, tok_len);
	memcpy(p, tok, tok_len);
	p += tok_len;
	if ((size_t)(p - buf) != total) {
		free(buf);
		return -EINVAL;
	}
	*ret = buf;
	*ret_len = total;
	return 0;
}

/* ------------------------------------------------------------ GSSAPI */

void spnego_gss_message(OM_uint32 major, OM_uint32 minor, char *buf, size_t size)
{
	OM_uint32 min, ctx = 0;
	gss_buffer_desc m;
	size_t n = 0;

	buf[0] = 0;
	do {
		if (GSS_ERROR(gss_display_status(&min, major, GSS_C_GSS_CODE, GSS_C_NO_OID,
						 &ctx, &m)))
			break;
		n += (size_t)snprintf(buf + n, n < size ? size - n : 0, "%s%.*s", n ? "; " : "",
				      (int)m.length, (char *)m.value);
		gss_release_buffer(&min, &m);
	} while (ctx && n < size);
	ctx = 0;
	if (minor && n < size) {
		do {
			if (GSS_ERROR(gss_display_status(&min, minor, GSS_C_MECH_CODE,
							 (gss_OID)gss_mech_krb5, &ctx, &m)))
				break;
			n += (size_t)snprintf(buf + n, n < size ? size - n : 0, ": %.*s",
					      (int)m.length, (char *)m.value);
			gss_release_buffer(&min, &m);
		} while (ctx && n < size);
	}
}

void spnego_wipe_release(gss_buffer_t b)
{
	OM_uint32 min;

	if (b->value && b->length)
		explicit_bzero(b->value, b->length);
	gss_release_buffer(&min, b);
}

/* One attempt: the krb5 mechanism token for service@host with cred, and the session key
 * (the initiator's subkey, what the server will derive its signing keys from).  On
 * failure *why says what GSSAPI answered. */
int spnego_gss_token(gss_cred_id_t cred, const char *host, struct nfskeys_secret **ret_key,
		     gss_buffer_t ret_token, char *why, size_t why_size)
{
	OM_uint32 maj, min;
	gss_name_t target = GSS_C_NO_NAME;
	gss_ctx_id_t ctx = GSS_C_NO_CONTEXT;
	gss_buffer_desc name, out = GSS_C_EMPTY_BUFFER;
	gss_buffer_set_t keyset = GSS_C_NO_BUFFER_SET;
	struct nfskeys_secret *key = NULL;
	char service[SPNEGO_HOST_MAX + 8];
	int r = -EKEYREJECTED;

	snprintf(service, sizeof(service), "cifs@%s", host);
	name.value = service;
	name.length = strlen(service);
	maj = gss_import_name(&min, &name, GSS_C_NT_HOSTBASED_SERVICE, &target);
	if (GSS_ERROR(maj)) {
		spnego_gss_message(maj, min, why, why_size);
		return -EINVAL;
	}
	/* No mutual authentication: one token, complete at once (as cifs.upcall). */
	maj = gss_init_sec_context(&min, cred, &ctx, target, (gss_OID)gss_mech_krb5, 0, 0,
				   GSS_C_NO_CHANNEL_BINDINGS, GSS_C_NO_BUFFER, NULL, &out, NULL,
				   NULL);
	if (maj != GSS_S_COMPLETE) {
		if (!GSS_ERROR(maj))
			snprintf(why, why_size, "GSSAPI wants another round trip (0x%x)", maj);
		else
			spnego_gss_message(maj, min, why, why_size);
		goto out;
	}
	maj = gss_inquire_sec_context_by_oid(&min, ctx, GSS_C_INQ_SSPI_SESSION_KEY, &keyset);
	if (GSS_ERROR(maj) || !keyset || keyset->count < 1 || !keyset->elements[0].length) {
		if (GSS_ERROR(maj))
			spnego_gss_message(maj, min, why, why_size);
		else
			snprintf(why, why_size, "no session key in the security context");
		goto out;
	}
	r = nfskeys_secret_new(keyset->elements[0].length, &key);
	if (r < 0) {
		snprintf(why, why_size, "%s", strerror(-r));
		goto out;
	}
	memcpy(nfskeys_secret_data(key), keyset->elements[0].value, keyset->elements[0].length);
	nfskeys_secret_set_len(key, keyset->elements[0].length);
	*ret_key = key;
	*ret_token = out;
	out.value = NULL;
	out.length = 0;
	r = 0;
out:
	if (keyset) {
		for (size_t i = 0; i < keyset->count; i++)
			if (keyset->elements[i].value)
				explicit_bzero(keyset->elements[i].value,
					       keyset->elements[i].length);
		gss_release_buffer_set(&min, &keyset);
	}
	gss_release_buffer(&min, &out);
	gss_delete_sec_context(&min, &ctx, GSS_C_NO_BUFFER);
	gss_release_name(&min, &target);
	return r;
}
