"""Python client interop test of envelope encryption: GenerateDataKey, Rewrap, RewrapBatch.

Run by tests/interop/run_python_client.sh after interop_test.py, against the same smcryptd and
keyring (smcryptd_launch.sh: aes256.pem an AES-256 key, dek.v1.pem / dek.v2.pem two versions of
an SM4 key, sm4.pem, sm2.pem). Checks are python3-cryptography's (OpenSSL 3.0 underneath),
never smcrypt's own:
  GenerateDataKey (AES_256_GCM under aes256)  the wrapped key opens with cryptography's AESGCM
      under the keyring key read from SMCRYPT_KEYS_DIR and with the Decrypt RPC; a file
      encrypted locally with AESGCM under the plaintext data key decrypts after the key is
      unwrapped through the RPC; WithoutPlaintext returns no key
  GenerateDataKey (SM4_GCM under sm4)          opens with interop_test.ComposedGcm over
      cryptography's SM4
  Rewrap / RewrapBatch (SM4_GCM, dek v1 -> v2) the result opens with ComposedGcm under the
      bytes of dek.v2.pem only; a tampered item is that item's DECRYPTION_FAILED
  Rewrap (SM2, sm2)                            opens with PublicKeyDecrypt
"""

import os
import sys
import unittest

import grpc
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers import algorithms
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

import rpc_status
from interop_test import ComposedGcm, read_pem_block
from smcrypt.v1 import crypto_pb2 as pb
from smcrypt.v1 import crypto_pb2_grpc as pb_grpc

TARGET = os.environ.get("SMCRYPT_TARGET", "127.0.0.1:50051")
KEYS_DIR = os.environ.get("SMCRYPT_KEYS_DIR", "")


def key_id(name, version=0):
    return pb.KeyRef(key_id=name, key_version=version)


def keyring_bytes(name):
    return read_pem_block(os.path.join(KEYS_DIR, name))


class EnvelopeInteropTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.channel = grpc.insecure_channel(TARGET)
        grpc.channel_ready_future(cls.channel).result(timeout=20)
        cls.stub = pb_grpc.CryptoServiceStub(cls.channel)

    @classmethod
    def tearDownClass(cls):
        cls.channel.close()

    def test_data_key_encrypts_a_file_locally_and_unwraps_through_decrypt(self):
        context = b"tenant=7;file=report.pdf"
        dk = self.stub.GenerateDataKey(pb.GenerateDataKeyRequest(
            key_spec=pb.DATA_KEY_SPEC_AES_256, algorithm=pb.AES_256_GCM,
            key=key_id("aes256"), aad=context))
        self.assertEqual(len(dk.plaintext_key), 32)
        self.assertEqual((len(dk.nonce), len(dk.tag)), (12, 16))
        # The wrapping is AES-256-GCM under the keyring key, ciphertext || tag as AESGCM has it.
        kek = AESGCM(keyring_bytes("aes256.pem"))
        self.assertEqual(kek.decrypt(dk.nonce, dk.ciphertext + dk.tag, context), dk.plaintext_key)
        with self.assertRaises(InvalidTag):
            kek.decrypt(dk.nonce, dk.ciphertext + dk.tag, b"tenant=8")

        # Envelope encryption: the file is encrypted here, never sent; only the wrapped key is kept.
        document = os.urandom(100_000)
        nonce = os.urandom(12)
        sealed = AESGCM(dk.plaintext_key).encrypt(nonce, document, b"report.pdf")
        stored = (dk.nonce, dk.ciphertext, dk.tag)
        del dk

        back = self.stub.Decrypt(pb.DecryptRequest(
            algorithm=pb.AES_256_GCM, key=key_id("aes256"), nonce=stored[0],
            ciphertext=stored[1], tag=stored[2], aad=context))
        self.assertEqual(AESGCM(back.plaintext).decrypt(nonce, sealed, b"report.pdf"), document)

        # Without the plaintext: only the wrapping, which opens the same way.
        wrapped = self.stub.GenerateDataKeyWithoutPlaintext(
            pb.GenerateDataKeyWithoutPlaintextRequest(
                key_spec=pb.DATA_KEY_SPEC_AES_128, algorithm=pb.AES_256_GCM,
                key=key_id("aes256"), aad=context))
        self.assertFalse(hasattr(wrapped, "plaintext_key"))
        key = kek.decrypt(wrapped.nonce, wrapped.ciphertext + wrapped.tag, context)
        self.assertEqual(len(key), 16)

    def test_sm4_data_key_opens_with_composed_gcm(self):
        dk = self.stub.GenerateDataKey(pb.GenerateDataKeyRequest(
            key_spec=pb.DATA_KEY_SPEC_SM4_128, algorithm=pb.SM4_GCM, key=key_id("sm4"),
            aad=b"ctx"))
        gcm = ComposedGcm(algorithms.SM4(keyring_bytes("sm4.pem")))
        self.assertEqual(gcm.open(dk.nonce, dk.ciphertext, dk.tag, b"ctx"), dk.plaintext_key)
        self.assertEqual(len(dk.plaintext_key), 16)

    def test_rewrap_moves_a_ciphertext_to_the_primary_version(self):
        v1 = ComposedGcm(algorithms.SM4(keyring_bytes("dek.v1.pem")))
        v2 = ComposedGcm(algorithms.SM4(keyring_bytes("dek.v2.pem")))
        # Made here, under version 1, as a client of an older replica would have stored it.
        nonce, message = os.urandom(12), b"sealed under dek version 1"
        ct, tag = v1.seal(nonce, message, b"row=42")
        r = self.stub.Rewrap(pb.RewrapRequest(
            algorithm=pb.SM4_GCM, key=key_id("dek", 1), ciphertext=ct, nonce=nonce, tag=tag,
            aad=b"row=42"))
        self.assertEqual((r.source_key_version, r.key_version), (1, 2))
        self.assertNotEqual(r.nonce, nonce)
        self.assertEqual(v2.open(r.nonce, r.ciphertext, r.tag, b"row=42"), message)
        with self.assertRaises(ValueError):
            v1.open(r.nonce, r.ciphertext, r.tag, b"row=42")

        # A batch: the second item is tampered with and fails alone.
        bad_tag = bytes([tag[0] ^ 1]) + tag[1:]
        items = [pb.RewrapRequest(algorithm=pb.SM4_GCM, key=key_id("dek", 1), ciphertext=ct,
                                  nonce=nonce, tag=t, aad=b"row=42") for t in (tag, bad_tag, tag)]
        results = self.stub.RewrapBatch(pb.RewrapBatchRequest(items=items)).results
        self.assertEqual([res.status.code for res in results],
                         [0, grpc.StatusCode.INVALID_ARGUMENT.value[0], 0])
        info = rpc_status.error_info_of_status(results[1].status.SerializeToString())
        self.assertEqual(info.reason, "DECRYPTION_FAILED")
        self.assertEqual(results[1].ciphertext, b"")
        for res in (results[0], results[2]):
            self.assertEqual(res.key_version, 2)
            self.assertEqual(v2.open(res.nonce, res.ciphertext, res.tag, b"row=42"), message)

        # Inline keys are refused.
        with self.assertRaises(grpc.RpcError) as cm:
            self.stub.Rewrap(pb.RewrapRequest(
                algorithm=pb.SM4_GCM, key=pb.KeyRef(inline_key=keyring_bytes("dek.v1.pem")),
                ciphertext=ct, nonce=nonce, tag=tag, aad=b"row=42"))
        self.assertEqual(cm.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)

    def test_rewrap_sm2_keeps_the_format(self):
        ct = self.stub.PublicKeyEncrypt(pb.PublicKeyEncryptRequest(
            algorithm=pb.SM2, key=key_id("sm2"), plaintext=b"sm2 envelope",
            sm2_format=pb.SM2_CIPHERTEXT_FORMAT_DER)).ciphertext
        r = self.stub.Rewrap(pb.RewrapRequest(algorithm=pb.SM2, key=key_id("sm2"), ciphertext=ct,
                                              sm2_format=pb.SM2_CIPHERTEXT_FORMAT_DER))
        self.assertEqual((r.source_key_version, r.key_version), (1, 1))
        self.assertEqual(r.ciphertext[0], 0x30)  # a DER SEQUENCE, as the input
        self.assertNotEqual(r.ciphertext, ct)
        back = self.stub.PublicKeyDecrypt(pb.PublicKeyDecryptRequest(
            algorithm=pb.SM2, key=key_id("sm2"), ciphertext=r.ciphertext,
            sm2_format=pb.SM2_CIPHERTEXT_FORMAT_DER))
        self.assertEqual(back.plaintext, b"sm2 envelope")


if __name__ == "__main__":
    print(f"envelope interop: smcryptd {TARGET}, keyring {KEYS_DIR}", flush=True)
    unittest.main()
