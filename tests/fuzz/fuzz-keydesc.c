/* libFuzzer target: nfskeys_key_parse_description(), the parser for the kernel's
 * "type;uid;gid;perm;description" strings.  Checks that an accepted string really has
 * that shape: a non-empty type without ';', three plain numbers, and the description
 * being exactly the rest of the input. */
#include <stdint.h>
#include <string.h>

#include "macros.h"
#include "nfskeys.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nfskeys_key_info info;
	const char *p;
	char *text;
	int r;

	if (size > 16384)
		return 0;
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	memset(&info, 0xa5, sizeof(info));
	r = nfskeys_key_parse_description(text, &info);
	if (r == 0) {
		size_t tl = strlen(info.type);
		if (tl == 0 || tl >= sizeof(info.type) || strchr(info.type, ';') ||
		    strncmp(text, info.type, tl) != 0 || text[tl] != ';')
			abort();
		/* skip type and the three numeric fields */
		p = text;
		for (int i = 0; i < 4; i++) {
			p = strchr(p, ';');
			if (!p)
				abort();
			p++;
		}
		if (!streq(p, info.description))
			abort();
	} else if (r != -EINVAL && r != -ENAMETOOLONG) {
		abort();
	}
	free(text);
	return 0;
}
