/* Test helper: parse an rxrpc v1 token (hex on standard input, as "nfskeys afs login
 * --print" writes it), decrypt its ticket with the service key from a keytab through
 * the krb5 API, and print the fields as key=value lines for the test to compare.
 * Usage: afs-token-check KEYTAB < token.hex   (exit 1 on any inconsistency) */
#include <ctype.h>
#include <krb5.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void hex(const char *name, const unsigned char *b, size_t n)
{
	printf("%s=", name);
	for (size_t i = 0; i < n; i++)
		printf("%02x", b[i]);
	putchar('\n');
}

int main(int argc, char *argv[])
{
	static unsigned char buf[20000];
	char line[50000], *unparsed = NULL;
	size_t n = 0;
	uint32_t kver, expiry, kvno;
	uint16_t sec, tlen;
	krb5_context k5;
	krb5_keytab kt;
	krb5_ticket *t = NULL;
	krb5_data data;
	krb5_error_code e;

	if (argc != 2) {
		fprintf(stderr, "usage: %s KEYTAB < token.hex\n", argv[0]);
		return 2;
	}
	/* skip comment lines, take the first hex line */
	while (fgets(line, sizeof(line), stdin))
		if (line[0] != '#')
			break;
	for (char *p = line; isxdigit((unsigned char)p[0]) && isxdigit((unsigned char)p[1]);
	     p += 2) {
		unsigned v;
		if (n >= sizeof(buf) || sscanf(p, "%2x", &v) != 1)
			return fprintf(stderr, "bad hex\n"), 1;
		buf[n++] = (unsigned char)v;
	}
	if (n < 24)
		return fprintf(stderr, "token too short (%zu bytes)\n", n), 1;
	memcpy(&kver, buf, 4);
	memcpy(&sec, buf + 4, 2);
	memcpy(&tlen, buf + 6, 2);
	memcpy(&expiry, buf + 8, 4);
	memcpy(&kvno, buf + 12, 4);
	printf("total=%zu\nkver=%u\nsecurity_index=%u\nticket_length=%u\nexpiry=%u\nkvno=%u\n",
	       n, kver, sec, tlen, expiry, kvno);
	hex("session_key", buf + 16, 8);
	if (n != 24u + tlen)
		return fprintf(stderr, "length %zu != 24 + %u\n", n, tlen), 1;

	if ((e = krb5_init_context(&k5)) != 0)
		return fprintf(stderr, "krb5_init_context: %d\n", (int)e), 1;
	data.magic = KV5M_DATA;
	data.length = tlen;
	data.data = (char *)buf + 24;
	if ((e = krb5_decode_ticket(&data, &t)) != 0 ||
	    (e = krb5_kt_resolve(k5, argv[1], &kt)) != 0 ||
	    (e = krb5_server_decrypt_ticket_keytab(k5, kt, t)) != 0) {
		fprintf(stderr, "ticket: %s\n", krb5_get_error_message(k5, e));
		return 1;
	}
	printf("ticket_enctype=%d\n", (int)t->enc_part.enctype);
	printf("ticket_session_enctype=%d\n", (int)t->enc_part2->session->enctype);
	hex("ticket_session_key", t->enc_part2->session->contents, t->enc_part2->session->length);
	printf("ticket_endtime=%u\n", (uint32_t)t->enc_part2->times.endtime);
	if (krb5_unparse_name(k5, t->enc_part2->client, &unparsed) == 0)
		printf("ticket_client=%s\n", unparsed);
	krb5_free_unparsed_name(k5, unparsed);
	if (krb5_unparse_name(k5, t->server, &unparsed) == 0)
		printf("ticket_server=%s\n", unparsed);
	krb5_free_unparsed_name(k5, unparsed);
	krb5_free_ticket(k5, t);
	krb5_kt_close(k5, kt);
	krb5_free_context(k5);
	return 0;
}
