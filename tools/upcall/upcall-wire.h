/* What the lean nfskeys-upcall makes of nfskeys-idmapd's answer, as root: the kernel
 * payload.  A header of its own so tests/fuzz/fuzz-upcall-reply.c runs the same code. */
#pragma once

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "idmap.h"
#include "nfskeys.h"

/* The kernel payload for the daemon's answer W to a request of KIND (as
 * nfskeys_idmap_payload()); < 0: not ours to build (the full helper takes over). */
static inline int upcall_wire_payload(const idmapd_answer *w, unsigned kind, uint8_t *buf, size_t size)
{
	size_t len;
	int n;

	if (w->kind != kind)
		return -EPROTO;
	switch (kind) {
	case NFSKEYS_IDMAP_NAME_TO_UID:
	case NFSKEYS_IDMAP_GROUP_TO_GID:
		n = snprintf((char *)buf, size, "%" PRIu32, (uint32_t)w->id);
		return n > 0 && (size_t)n < size ? n + 1 : -ENOBUFS; /* with its NUL */
	case NFSKEYS_IDMAP_UID_TO_NAME:
	case NFSKEYS_IDMAP_GID_TO_GROUP:
		len = w->name ? strlen(w->name) : 0;
		if (len == 0 || len >= NFSKEYS_IDMAP_NAME_MAX || len > size)
			return -EINVAL;
		memcpy(buf, w->name, len); /* no NUL */
		return (int)len;
	case NFSKEYS_IDMAP_SID_TO_UID:
	case NFSKEYS_IDMAP_SID_TO_GID: {
		uint32_t id = w->id;

		memcpy(buf, &id, sizeof(id)); /* host byte order */
		return sizeof(id);
	}
	case NFSKEYS_IDMAP_UID_TO_SID:
	case NFSKEYS_IDMAP_GID_TO_SID:
		/* The binary SID (revision, count, 6-byte authority, count 32-bit
		 * sub-authorities), padded to the 68 bytes cifs.idmap sends: the daemon
		 * encodes it with nfskeys_sid_to_binary(), which pads it so. */
		if (w->sid.sid_len != NFSKEYS_SID_BINARY_MAX || w->sid.sid_len > size ||
		    8 + 4 * (size_t)(uint8_t)w->sid.sid_val[1] > w->sid.sid_len)
			return -EINVAL;
		memcpy(buf, w->sid.sid_val, w->sid.sid_len);
		return (int)w->sid.sid_len;
	}
	return -EINVAL;
}
