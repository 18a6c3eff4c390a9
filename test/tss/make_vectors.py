#!/usr/bin/python3
# Computes the expected values pasted into tss_kat_test.cpp with Debian's python3-cryptography
# (its KBKDFCMAC is tested against NIST CAVP KDFCTR vectors upstream), independently of lib/tss.
# Run with the system python: /usr/bin/python3 test/tss/make_vectors.py
import struct
from cryptography.hazmat.primitives import cmac
from cryptography.hazmat.primitives.ciphers import algorithms
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.kbkdf import KBKDFCMAC, CounterLocation, Mode


def kdf(key, label, context, length):
    return KBKDFCMAC(algorithm=algorithms.AES, mode=Mode.CounterMode, length=length, rlen=1,
                     llen=4, location=CounterLocation.BeforeFixed, label=label,
                     context=context, fixed=None).derive(key)


def cmac_aes(key, msg):
    c = cmac.CMAC(algorithms.AES(key))
    c.update(msg)
    return c.finalize()


def h(b):
    return b.hex()


# CMAC: RFC 4493 (AES-128) and SP 800-38B (AES-256) messages, to confirm the remembered tags.
msg = bytes.fromhex('6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51'
                    '30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710')
k128 = bytes.fromhex('2b7e151628aed2a6abf7158809cf4f3c')
k256 = bytes.fromhex('603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4')
for n in (0, 16, 40, 64):
    print('cmac128', n, h(cmac_aes(k128, msg[:n])))
for n in (0, 16, 40, 64):
    print('cmac256', n, h(cmac_aes(k256, msg[:n])))

# GCM test cases 13-16 (McGrew & Viega), to confirm the remembered ciphertexts and tags.
k15 = bytes.fromhex('feffe9928665731c6d6a8f9467308308' * 2)
p15 = bytes.fromhex('d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72'
                    '1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255')
iv15 = bytes.fromhex('cafebabefacedbaddecaf888')
a16 = bytes.fromhex('feedfacedeadbeeffeedfacedeadbeefabaddad2')
print('gcm13', h(AESGCM(bytes(32)).encrypt(bytes(12), b'', None)))
print('gcm14', h(AESGCM(bytes(32)).encrypt(bytes(12), bytes(16), None)))
print('gcm15', h(AESGCM(k15).encrypt(iv15, p15, None)))
print('gcm16', h(AESGCM(k15).encrypt(iv15, p15[:60], a16)))

# KDF: SP 800-108 counter mode, AES-256-CMAC, 8-bit counter first, L as 32 bits.
kdf_key = bytes(range(32))
print('kdf_u1', h(kdf(kdf_key, b'U1', bytes.fromhex('0003' '00000001' '0a000001'), 44)))
print('kdf_u2', h(kdf(kdf_key, b'U2', bytes.fromhex('ffff' '12345678' 'c0a80102'), 44)))
print('kdf_long', h(kdf(k256, b'label', b'context bytes', 80)))

# A whole secure frame: domain key 00..1f, cluster mode, SDI 0x00abcd, AN 1, epoch 3,
# TSC 0x000000000201, rekey mask 0xff00 shift 8 (rekey 2), no SSI.
src, dst = bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])
sport, dport = 0x1234, 4793
epoch, tsc = 3, 0x201
payload = bytes((i * 7 + 3) & 0xff for i in range(40))  # stands for PDS + SES + data
tss = bytes([(1 << 3) | 1, 0x00, 0xab, 0xcd]) + struct.pack('>Q', (epoch << 48) | tsc)
km = kdf(kdf_key, b'U1', struct.pack('>HI', epoch, 2) + src, 44)
key, mask = km[:32], km[32:]
iv = bytes(a ^ b for a, b in zip(src + struct.pack('>Q', (epoch << 48) | tsc), mask))
aad = src + dst + struct.pack('>HH', sport, 0) + tss
sealed = AESGCM(key).encrypt(iv, payload, aad)


def ipv4(total):
    hdr = bytearray(struct.pack('>BBHHHBBH4s4s', 0x45, 0, total, 0, 0x4000, 64, 17, 0, src, dst))
    s = sum(struct.unpack('>10H', hdr))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    hdr[10:12] = struct.pack('>H', ~s & 0xffff)
    return bytes(hdr)


eth = bytes.fromhex('020000000002' '020000000001' '0800')
udp_len = 8 + len(tss) + len(sealed)
frame = eth + ipv4(20 + udp_len) + struct.pack('>HHHH', sport, dport, udp_len, 0) + tss + sealed
print('frame_key', h(key))
print('frame_mask', h(mask))
print('frame_iv', h(iv))
print('frame_aad', h(aad))
print('frame_sealed', h(frame))
