/* Test helper: check a cifs.spnego key payload (struct cifs_spnego_msg, binary on standard
 * input, as `keyctl pipe` writes it) the way a CIFS server would: accept its SPNEGO blob
 * with gss_accept_sec_context() and the service keytab ($KRB5_KTNAME), and compare the
 * session key in the payload with the acceptor's.  Prints key=value lines.
 * Usage: spnego-accept krb5|mskrb5 < payload     (exit 1 on any inconsistency) */
#include <gssapi/gssapi.h>
#include <gssapi/gssapi_ext.h>
#include <gssapi/gssapi_krb5.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const uint8_t krb5_oid[] = { 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x12, 0x01, 0x02, 0x02 };
static const uint8_t mskrb5_oid[] = { 0x2a, 0x86, 0x48, 0x82, 0xf7, 0x12, 0x01, 0x02, 0x02 };

static void status(const char *what, OM_uint32 maj, OM_uint32 min)
{
	OM_uint32 m, ctx = 0;
	gss_buffer_desc b;

	gss_display_status(&m, maj, GSS_C_GSS_CODE, GSS_C_NO_OID, &ctx, &b);
	fprintf(stderr, "%s: %.*s", what, (int)b.length, (char *)b.value);
	gss_release_buffer(&m, &b);
	ctx = 0;
	gss_display_status(&m, min, GSS_C_MECH_CODE, GSS_C_NO_OID, &ctx, &b);
	fprintf(stderr, ": %.*s\n", (int)b.length, (char *)b.value);
	gss_release_buffer(&m, &b);
}

static int find(const uint8_t *h, size_t hl, const uint8_t *n, size_t nl)
{
	for (size_t i = 0; i + nl <= hl; i++)
		if (!memcmp(h + i, n, nl))
			return (int)i;
	return -1;
}

int main(int argc, char *argv[])
{
	static uint8_t buf[65536];
	uint32_t hdr[4];
	size_t n = fread(buf, 1, sizeof(buf), stdin);
	OM_uint32 maj, min;
	gss_ctx_id_t ctx = GSS_C_NO_CONTEXT;
	gss_buffer_desc in, out = GSS_C_EMPTY_BUFFER, name;
	gss_name_t src = GSS_C_NO_NAME;
	gss_OID mech = GSS_C_NO_OID;
	gss_buffer_set_t keys = GSS_C_NO_BUFFER_SET;
	const uint8_t *want;
	int at;

	if (argc != 2 || (strcmp(argv[1], "krb5") && strcmp(argv[1], "mskrb5")))
		return fprintf(stderr, "usage: %s krb5|mskrb5 < payload\n", argv[0]), 2;
	want = strcmp(argv[1], "krb5") ? mskrb5_oid : krb5_oid;
	if (n < 16)
		return fprintf(stderr, "payload too short (%zu bytes)\n", n), 1;
	memcpy(hdr, buf, 16);
	printf("total=%zu\nversion=%u\nflags=%u\nsesskey_len=%u\nsecblob_len=%u\n", n, hdr[0],
	       hdr[1], hdr[2], hdr[3]);
	if (hdr[0] != 2 || hdr[1] != 0 || (size_t)16 + hdr[2] + hdr[3] != n || hdr[2] == 0)
		return fprintf(stderr, "bad cifs_spnego_msg header\n"), 1;
	/* the NegTokenInit's mechTypes list holds exactly the OID sec= asks for */
	at = find(buf + 16 + hdr[2], hdr[3], want, sizeof(krb5_oid));
	printf("blob_tag=%02x\nmechtype_offset=%d\n", buf[16 + hdr[2]], at);
	if (buf[16 + hdr[2]] != 0x60 || at < 0 || at > 40)
		return fprintf(stderr, "blob is not a SPNEGO NegTokenInit for %s\n", argv[1]), 1;

	in.value = buf + 16 + hdr[2];
	in.length = hdr[3];
	maj = gss_accept_sec_context(&min, &ctx, GSS_C_NO_CREDENTIAL, &in,
				     GSS_C_NO_CHANNEL_BINDINGS, &src, &mech, &out, NULL, NULL,
				     NULL);
	if (GSS_ERROR(maj))
		return status("gss_accept_sec_context", maj, min), 1;
	printf("accept=%s\n", maj == GSS_S_COMPLETE ? "complete" : "continue");
	if (!GSS_ERROR(gss_display_name(&min, src, &name, NULL))) {
		printf("client=%.*s\n", (int)name.length, (char *)name.value);
		gss_release_buffer(&min, &name);
	}
	maj = gss_inquire_sec_context_by_oid(&min, ctx, GSS_C_INQ_SSPI_SESSION_KEY, &keys);
	if (GSS_ERROR(maj) || !keys || keys->count < 1)
		return status("session key", maj, min), 1;
	printf("acceptor_key_len=%zu\n", keys->elements[0].length);
	if (keys->elements[0].length != hdr[2] ||
	    memcmp(keys->elements[0].value, buf + 16, hdr[2]) != 0) {
		printf("session_key=differs\n");
		return 1;
	}
	printf("session_key=matches\n");
	gss_release_buffer_set(&min, &keys);
	gss_release_buffer(&min, &out);
	gss_delete_sec_context(&min, &ctx, GSS_C_NO_BUFFER);
	gss_release_name(&min, &src);
	return 0;
}
