/* libFuzzer target: SID text and binary forms (nfskeys_sid_from_string/_to_string,
 * nfskeys_sid_from_binary/_to_binary).  The same bytes are tried as text and as binary;
 * beyond the sanitizers it checks the round trips (text -> SID -> text is the canonical
 * form, computed here independently with strtoull; binary -> SID -> binary is equal). */
#include <ctype.h>
#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include "macros.h"
#include "nfskeys.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(bool ok)
{
	if (!ok)
		abort();
}

static bool sid_equal(const struct nfskeys_sid *a, const struct nfskeys_sid *b)
{
	if (a->revision != b->revision || a->num_subauth != b->num_subauth ||
	    memcmp(a->authority, b->authority, 6) != 0)
		return false;
	for (unsigned i = 0; i < a->num_subauth; i++)
		if (a->subauth[i] != b->subauth[i])
			return false;
	return true;
}

/* The text the kernel would write for an accepted SID string, derived from the input
 * alone: "S", then each '-'-separated part re-printed without leading zeros, the
 * authority in decimal below 2^32 and as 0x-hex from there.  Empty on a part that is not
 * a plain number (the parser must then have refused the text). */
static void canonical(const char *text, char *out, size_t size)
{
	char *copy = strdup(text), *save = NULL, *part;
	size_t off;
	int idx = 0;

	check(copy != NULL);
	out[0] = '\0';
	off = (size_t)snprintf(out, size, "S");
	strtok_r(copy, "-", &save); /* the "S" */
	while ((part = strtok_r(NULL, "-", &save))) {
		unsigned long long v;
		char *end;
		bool hex = idx == 1 && (startswith(part, "0x") || startswith(part, "0X"));

		if (!(hex ? isxdigit((unsigned char)part[2]) : isdigit((unsigned char)part[0]))) {
			out[0] = '\0';
			break;
		}
		v = strtoull(part, &end, hex ? 16 : 10);
		if (*end) {
			out[0] = '\0';
			break;
		}
		if (idx == 1 && v > UINT32_MAX)
			off += (size_t)snprintf(out + off, size - off, "-0x%llx", v);
		else
			off += (size_t)snprintf(out + off, size - off, "-%llu", v);
		check(off < size);
		idx++;
	}
	free(copy);
}

static void fuzz_text(const uint8_t *data, size_t size)
{
	char text[512], buf[NFSKEYS_SID_STRING_MAX], canon[1024], small[8];
	struct nfskeys_sid sid, again;
	int n, r;

	if (size >= sizeof(text))
		return;
	memcpy(text, data, size);
	text[size] = '\0';
	memset(&sid, 0xa5, sizeof(sid));
	r = nfskeys_sid_from_string(text, &sid);
	if (r < 0) {
		check(r == -EINVAL);
		return;
	}
	check(sid.num_subauth <= NFSKEYS_SID_MAX_SUBAUTH);
	n = nfskeys_sid_to_string(&sid, buf, sizeof(buf));
	check(n > 0 && (size_t)n == strlen(buf));
	/* the text matches the kernel's canonical form of the input */
	canonical(text, canon, sizeof(canon));
	check(streq(buf, canon));
	/* canonical text parses back to the same SID, and is a fixed point */
	check(nfskeys_sid_from_string(buf, &again) == 0 && sid_equal(&sid, &again));
	/* a short buffer is refused, never overrun (ASan sees the 8 bytes) */
	r = nfskeys_sid_to_string(&sid, small, sizeof(small));
	check(r == -ENOBUFS || (r > 0 && (size_t)r < sizeof(small) && streq(small, buf)));
	/* text -> binary -> text */
	{
		uint8_t bin[NFSKEYS_SID_BINARY_MAX];
		char buf2[NFSKEYS_SID_STRING_MAX];

		n = nfskeys_sid_to_binary(&sid, bin, sizeof(bin));
		check(n == NFSKEYS_SID_BINARY_MAX);
		check(nfskeys_sid_from_binary(bin, (size_t)n, &again) == 0 && sid_equal(&sid, &again));
		check(nfskeys_sid_to_string(&again, buf2, sizeof(buf2)) > 0 && streq(buf, buf2));
	}
}

static void fuzz_binary(const uint8_t *data, size_t size)
{
	uint8_t full[NFSKEYS_SID_BINARY_MAX + 4], *minimal;
	char text[NFSKEYS_SID_STRING_MAX];
	struct nfskeys_sid sid, again;
	size_t need;
	int n, r;

	memset(&sid, 0xa5, sizeof(sid));
	r = nfskeys_sid_from_binary(data, size, &sid);
	if (r < 0) {
		check(r == -EINVAL);
		/* refused only when too short or too many sub-authorities */
		check(size < 8 || data[1] > NFSKEYS_SID_MAX_SUBAUTH || size < 8 + 4 * (size_t)data[1]);
		return;
	}
	need = 8 + 4 * (size_t)sid.num_subauth;
	check(size >= need && sid.num_subauth == data[1]);
	/* minimal encoding equals the bytes read, in an exactly sized heap buffer */
	minimal = malloc(need);
	check(minimal != NULL);
	n = nfskeys_sid_to_binary(&sid, minimal, need);
	check(n == (int)need && memcmp(minimal, data, need) == 0);
	if (need > 8)
		check(nfskeys_sid_to_binary(&sid, minimal, need - 1) == -ENOBUFS);
	free(minimal);
	/* the full 68-byte form: the same prefix, zero after it */
	memset(full, 0xee, sizeof(full));
	n = nfskeys_sid_to_binary(&sid, full, sizeof(full));
	check(n == NFSKEYS_SID_BINARY_MAX && memcmp(full, data, need) == 0);
	for (size_t i = need; i < NFSKEYS_SID_BINARY_MAX; i++)
		check(full[i] == 0);
	check(full[NFSKEYS_SID_BINARY_MAX] == 0xee);
	/* binary -> text -> binary */
	n = nfskeys_sid_to_string(&sid, text, sizeof(text));
	check(n > 0);
	check(nfskeys_sid_from_string(text, &again) == 0 && sid_equal(&sid, &again));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_text(data, size);
	fuzz_binary(data, size);
	return 0;
}
