// RSA signatures (RSASSA-PKCS1-v1_5 with SHA-256, RFC 8017 §8.2.1 — what DKIM's rsa-sha256 is,
// RFC 6376 §3.3.1) by the system's OpenSSL 3 libcrypto, called through bun:ffi. Why: Bun's
// node:crypto signs with its built-in BoringSSL at about 0.6 ms per RSA-2048 signature on the
// machines we measure, OpenSSL 3 at about 0.27 ms (README.md, "Past experiments": the DKIM
// signing cost, beside `openssl speed rsa2048`), and one signature per attempt is the largest
// single cost of a delivery. Only the library's own calls are used; nothing here is cryptography
// of ours.
//
// Optional by design: where libcrypto.so.3 does not load (another libc, no OpenSSL 3),
// `openSsl()` answers null and mail/dkim.ts signs with node:crypto, as it does for Ed25519.
import { dlopen, FFIType, ptr } from 'bun:ffi';

/** An RSA private key held by libcrypto. */
export interface OpenSslRsaKey {
  /** The RSASSA-PKCS1-v1_5 SHA-256 signature of `data`; throws if libcrypto reports a failure. */
  sign(data: Uint8Array): Buffer;
  /** Releases the key; it must not be used afterwards. */
  free(): void;
}

export interface OpenSsl {
  /** The key of a PKCS#8 or traditional DER private key, or null if libcrypto cannot read it. */
  rsaKey(der: Uint8Array): OpenSslRsaKey | null;
}

const SYMBOLS = {
  // EVP_PKEY *d2i_AutoPrivateKey(EVP_PKEY **a, const unsigned char **pp, long length)
  d2i_AutoPrivateKey: { args: [FFIType.ptr, FFIType.ptr, FFIType.i64], returns: FFIType.ptr },
  EVP_PKEY_free: { args: [FFIType.ptr], returns: FFIType.void },
  EVP_PKEY_get_size: { args: [FFIType.ptr], returns: FFIType.i32 },
  EVP_MD_CTX_new: { args: [], returns: FFIType.ptr },
  EVP_MD_CTX_free: { args: [FFIType.ptr], returns: FFIType.void },
  EVP_sha256: { args: [], returns: FFIType.ptr },
  // int EVP_DigestSignInit(EVP_MD_CTX *ctx, EVP_PKEY_CTX **pctx, const EVP_MD *type, ENGINE *e, EVP_PKEY *pkey)
  EVP_DigestSignInit: { args: [FFIType.ptr, FFIType.ptr, FFIType.ptr, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 },
  // int EVP_DigestSign(EVP_MD_CTX *ctx, unsigned char *sig, size_t *siglen, const unsigned char *tbs, size_t tbslen)
  EVP_DigestSign: { args: [FFIType.ptr, FFIType.ptr, FFIType.ptr, FFIType.ptr, FFIType.u64], returns: FFIType.i32 },
  // Failures leave entries on the calling thread's error queue; they are dropped, not kept.
  ERR_clear_error: { args: [], returns: FFIType.void },
} as const;

let loaded: OpenSsl | null | undefined;

/** libcrypto.so.3 of this thread (each thread loads it once), or null when it is not there. */
export function openSsl(): OpenSsl | null {
  if (loaded !== undefined) return loaded;
  try {
    loaded = bind(dlopen('libcrypto.so.3', SYMBOLS).symbols);
  } catch {
    loaded = null;
  }
  return loaded;
}

type Symbols = ReturnType<typeof dlopen<typeof SYMBOLS>>['symbols'];

function bind(f: Symbols): OpenSsl {
  const sha256 = f.EVP_sha256();
  if (!sha256) throw new Error('libcrypto has no SHA-256');
  return {
    rsaKey(der) {
      if (!der.length) return null;
      // d2i advances the pointer it is given: a cell holding the address of the DER bytes.
      const bytes = new Uint8Array(der);
      const cursor = new BigUint64Array([BigInt(ptr(bytes))]);
      const pkey = f.d2i_AutoPrivateKey(null, cursor, bytes.length);
      if (!pkey) {
        f.ERR_clear_error();
        return null;
      }
      const size = f.EVP_PKEY_get_size(pkey);
      if (size <= 0 || size > 2048) {
        f.EVP_PKEY_free(pkey);
        return null;
      }
      let key: typeof pkey | null = pkey;
      const length = new BigUint64Array(1);
      return {
        sign(data) {
          if (!key) throw new Error('the OpenSSL key was freed');
          const signature = Buffer.allocUnsafe(size);
          const ctx = f.EVP_MD_CTX_new();
          if (!ctx) throw new Error('OpenSSL: no memory for a digest context');
          try {
            length[0] = BigInt(size);
            // An empty `data` has no address of its own; sign it from a one-byte buffer, length 0.
            const tbs = data.length ? data : new Uint8Array(1);
            if (f.EVP_DigestSignInit(ctx, null, sha256, null, key) !== 1 || f.EVP_DigestSign(ctx, signature, length, tbs, data.length) !== 1) {
              f.ERR_clear_error();
              throw new Error('OpenSSL could not sign with this key');
            }
            return signature.subarray(0, Number(length[0]));
          } finally {
            f.EVP_MD_CTX_free(ctx);
          }
        },
        free() {
          if (key) f.EVP_PKEY_free(key);
          key = null;
        },
      };
    },
  };
}
