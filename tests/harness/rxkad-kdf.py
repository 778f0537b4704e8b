#!/usr/bin/env python3
# An independent rendering of rxkad-kdf (draft-kaduk-afs3-rxkad-k5-kdf) for the tests:
# the oracle the C implementation in plugins/cred-afs is checked against.
#   rxkad-kdf.py ENCTYPE KEYHEX      print the rxkad session key (hex)
#   rxkad-kdf.py --r2k-des3 HEX21    RFC 3961 des3 random-to-key of 21 bytes (hex)
#   rxkad-kdf.py --vectors           the fixed vectors used by tests/unit/test-rxkad-kdf.c
import hashlib
import hmac
import sys

# The 4 weak and 12 semi-weak DES keys (odd parity), from FIPS 74 / NIST SP 800-67.
WEAK = {bytes.fromhex(x) for x in (
    "0101010101010101 fefefefefefefefe 1f1f1f1f0e0e0e0e e0e0e0e0f1f1f1f1 "
    "01fe01fe01fe01fe fe01fe01fe01fe01 1fe01fe00ef10ef1 e01fe01ff10ef10e "
    "01e001e001f101f1 e001e001f101f101 1ffe1ffe0efe0efe fe1ffe1ffe0efe0e "
    "011f011f010e010e 1f011f010e010e01 e0fee0fef1fef1fe fee0fee0fef1fef1").split()}


def odd_parity(b):
    return bytes((x & 0xfe) | (1 - bin(x & 0xfe).count("1") % 2) for x in b)


def kdf(key):
    """K(i) = HMAC-MD5(key, [i]_1 || "rxkad" || 0x00 || [64]_4), first 64 bits, odd
    parity; a weak key moves to the next i."""
    for i in range(1, 256):
        msg = bytes([i]) + b"rxkad" + b"\x00" + (64).to_bytes(4, "big")
        d = odd_parity(hmac.new(key, msg, hashlib.md5).digest()[:8])
        if d not in WEAK:
            return d
    raise ValueError("all derived keys weak")


def r2k_des3(r21):
    """RFC 3961 6.3.1: 3 x 56 random bits -> 3 x 64-bit DES keys with parity."""
    out = b""
    for b in range(3):
        s = r21[7 * b:7 * b + 7]
        last = sum((s[j] & 1) << (j + 1) for j in range(7))
        out += odd_parity(bytes(s[j] & 0xfe for j in range(7)) + bytes([last]))
    return out


def des3_strip(key24):
    """The inverse of r2k_des3, as the draft asks for 3DES session keys."""
    out = b""
    for b in range(3):
        s = key24[8 * b:8 * b + 8]
        out += bytes((s[j] & 0xfe) | ((s[7] >> (j + 1)) & 1) for j in range(7))
    return out


def session_key(enctype, key):
    if enctype in (1, 2, 3):
        return key
    if enctype in (5, 7, 16):
        return kdf(des3_strip(key))
    return kdf(key)


if __name__ == "__main__":
    if sys.argv[1] == "--r2k-des3":
        print(r2k_des3(bytes.fromhex(sys.argv[2])).hex())
    elif sys.argv[1] == "--vectors":
        r21 = bytes.fromhex("9e1f6a33c04d51b7e8a2f0135c7d9b24e6f8019acb")
        for name, et, k in (("aes256", 18, bytes(range(32))),
                            ("aes128", 17, bytes(range(0x40, 0x50))),
                            ("des3", 16, r2k_des3(r21))):
            print(name, et, k.hex(), session_key(et, k).hex())
        print("des3-stripped", r21.hex())
    else:
        print(session_key(int(sys.argv[1]), bytes.fromhex(sys.argv[2])).hex())
