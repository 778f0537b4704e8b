/* libFuzzer target: what nfskeys-upcall (run as root) makes of nfskeys-idmapd's reply to
 * a lookup.  The first input byte picks the kind asked (1..9, enum nfskeys_idmap_kind);
 * the rest is the XDR result (idmapd_lookup_res) as it arrives.  When it decodes, both
 * helpers' readings run: the lean helper's kernel payload (upcall_wire_payload,
 * tools/upcall/upcall-wire.h) and the full helper's answer (idmapd_client_answer, then
 * nfskeys_idmap_payload).  What either accepts must have the kernel's exact shape for
 * the kind asked; anything else must be refused, never half-used. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "idmapd-client.h"
#include "upcall-wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(bool ok)
{
	if (!ok)
		abort();
}

/* The kernel's shape of a payload for KIND (see nfskeys_idmap_payload). */
static void check_shape(unsigned kind, const uint8_t *p, int len, size_t cap)
{
	check(len > 0 && (size_t)len <= cap);
	switch (kind) {
	case NFSKEYS_IDMAP_NAME_TO_UID:
	case NFSKEYS_IDMAP_GROUP_TO_GID:
		/* decimal digits and their NUL */
		check(len >= 2 && p[len - 1] == '\0');
		for (int i = 0; i < len - 1; i++)
			check(p[i] >= '0' && p[i] <= '9');
		break;
	case NFSKEYS_IDMAP_UID_TO_NAME:
	case NFSKEYS_IDMAP_GID_TO_GROUP:
		/* the name, no NUL */
		check(len < NFSKEYS_IDMAP_NAME_MAX && !memchr(p, '\0', (size_t)len));
		break;
	case NFSKEYS_IDMAP_SID_TO_UID:
	case NFSKEYS_IDMAP_SID_TO_GID:
		check(len == 4);
		break;
	case NFSKEYS_IDMAP_UID_TO_SID:
	case NFSKEYS_IDMAP_GID_TO_SID:
		/* a binary SID padded to 68 bytes, its sub-authorities inside */
		check(len == NFSKEYS_SID_BINARY_MAX && 8 + 4 * (size_t)p[1] <= (size_t)len);
		break;
	default:
		check(false); /* no payload for the other kinds */
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t lean[NFSKEYS_IDMAP_NAME_MAX + NFSKEYS_SID_BINARY_MAX];
	char full[NFSKEYS_IDMAP_NAME_MAX + NFSKEYS_SID_BINARY_MAX];
	idmapd_lookup_res res;
	struct nfskeys_idmap_answer a;
	unsigned kind;
	XDR x;
	int r, len;

	if (size < 1)
		return 0;
	kind = data[0] % (_NFSKEYS_IDMAP_KIND_MAX - 1) + 1;
	memset(&res, 0, sizeof(res));
	xdrmem_create(&x, (char *)(uintptr_t)(data + 1), (unsigned)(size - 1), XDR_DECODE);
	if (!xdr_idmapd_lookup_res(&x, &res)) {
		xdr_free((xdrproc_t)xdr_idmapd_lookup_res, (char *)&res);
		xdr_destroy(&x);
		return 0;
	}
	xdr_destroy(&x);

	/* the lean helper: only a status 0 answer is read */
	if (res.status == 0) {
		const idmapd_answer *w = &res.idmapd_lookup_res_u.answer;

		len = upcall_wire_payload(w, kind, lean, sizeof(lean));
		if (len >= 0) {
			check(w->kind == kind);
			if (kind != NFSKEYS_IDMAP_PRINCIPAL_TO_IDS)
				check_shape(kind, lean, len, sizeof(lean));
		}
	}

	/* the full helper: the client's reading, then the kernel payload */
	r = idmapd_client_answer(&res, (enum nfskeys_idmap_kind)kind, &a, NULL);
	if (r == 0) {
		check(res.status == 0 && a.kind == kind);
		check(memchr(a.name, '\0', sizeof(a.name)) && memchr(a.backend, '\0', sizeof(a.backend)));
		if (kind == NFSKEYS_IDMAP_UID_TO_NAME || kind == NFSKEYS_IDMAP_GID_TO_GROUP)
			check(a.name[0] != '\0');
		len = nfskeys_idmap_payload(&a, full, sizeof(full));
		if (len >= 0 && kind != NFSKEYS_IDMAP_PRINCIPAL_TO_IDS)
			check_shape(kind, (const uint8_t *)full, len, sizeof(full));
	} else {
		check(r < 0);
		if (res.status != 0)
			check(r == (res.status < 0 ? res.status : -EIO));
	}
	xdr_free((xdrproc_t)xdr_idmapd_lookup_res, (char *)&res);
	return 0;
}
