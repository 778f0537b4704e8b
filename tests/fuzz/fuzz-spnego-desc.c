/* libFuzzer target: spnego_desc_parse() (tools/upcall/spnego-desc.c), the parser for the
 * cifs.spnego descriptions the request-key helper receives.  An accepted description
 * must hold exactly what the parser promises: version 2, a host of allowed characters,
 * an address of the family named, a known sec=, a user without control characters, and
 * no more unknown fields than the bound. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "spnego-desc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct spnego_desc d;
	const char *why = NULL;
	char *text;
	int r;

	if (size > 8192)
		return 0;
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	memset(&d, 0xa5, sizeof(d));
	r = spnego_desc_parse(text, &d, &why);
	if (r == 0) {
		size_t hl = strnlen(d.host, sizeof(d.host));

		if (d.version != SPNEGO_DESC_VERSION || hl == 0 || hl > SPNEGO_HOST_MAX ||
		    strpbrk(d.host, "@/; \t\n=") || !strstr(text, "host=") ||
		    (d.family != AF_INET && d.family != AF_INET6) ||
		    (d.sec != SPNEGO_SEC_KRB5 && d.sec != SPNEGO_SEC_MSKRB5 &&
		     d.sec != SPNEGO_SEC_IAKERB) ||
		    d.unknown > SPNEGO_UNKNOWN_MAX || strlen(text) > SPNEGO_DESC_MAX)
			abort();
		if (d.have_user) {
			size_t ul = strnlen(d.user, sizeof(d.user));

			if (ul == 0 || ul > SPNEGO_USER_MAX || strchr(d.user, ';'))
				abort();
			for (size_t i = 0; i < ul; i++)
				if ((unsigned char)d.user[i] < 0x20)
					abort();
		}
	} else if (r != -EINVAL || !why) {
		abort();
	}
	free(text);
	return 0;
}
