// reload.h — keyring and TLS file reloads without a restart (docs/design.md "Service").
//
// KeyringReloader re-reads --keys_dir into the engine: on request (SIGHUP) and, through
// a PeriodicTask, whenever the directory's fingerprint changes. The fingerprint covers
// every entry that does not start with a dot — name, the path its symlinks resolve to,
// device, inode, size, mode, owner, mtime and ctime — and the directory itself, so the
// atomic `..data` symlink swap of a Kubernetes Secret update is seen, as are files
// replaced or edited in place. A reload loads the whole directory with the start-up
// rules (KeyStore::LoadFromDirectory, permission checks included); if that fails the
// engine keeps its keyring entirely. Either way the result is logged and reported to the
// ReloadObserver; key material is never logged, key ids are.
//
// TlsFileCheck holds the TLS material gRPC's FileWatcherCertificateProvider serves
// (server.cc) in memory files of its own (memfd, read by gRPC as /proc/self/fd/N): the
// private key and certificate chain in one file, so gRPC never reads a key of one
// version with a certificate of another, and the client CA bundle in another. When the
// fingerprint of --tls_cert / --tls_key / --tls_client_ca changes it checks them — the
// chain and private key parse and match, the client CA bundle parses — and only a valid
// set replaces the memory files; a bad, half-written or missing file is logged and
// reported, and new handshakes keep the previous certificate.
#ifndef SMCRYPT_SERVER_RELOAD_H_
#define SMCRYPT_SERVER_RELOAD_H_

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "server/engine/crypto_engine.h"
#include "server/engine/key_store.h"
#include "smcrypt/secret_data.h"

namespace smcrypt::server {

// TlsCertificateExpiry: when the certificates smcryptd serves TLS with stop being valid
// (their notAfter). InfinitePast where there is none.
struct TlsCertificateExpiry {
  absl::Time server = absl::InfinitePast();     // the first (leaf) certificate of --tls_cert
  absl::Time client_ca = absl::InfinitePast();  // the earliest of --tls_client_ca's bundle
};

// ReloadObserver receives the result of every keyring reload and of every check of
// changed TLS files (the metrics layer implements it). Must be thread-safe.
class ReloadObserver {
 public:
  virtual ~ReloadObserver() = default;
  virtual void OnKeyringReload(bool ok) = 0;
  virtual void OnTlsCertificateReload(bool ok) = 0;
  // OnKeyringLoaded receives the keyring in use after each successful reload (the new
  // one, or the previous one when nothing changed), before OnKeyringReload(true); the
  // owner of the engine reports the keyring loaded at start-up itself.
  virtual void OnKeyringLoaded(const KeyStore& keys) {}
  // OnTlsCertificatesInstalled receives the notAfter of each set of TLS files TlsFileCheck
  // installs (at Create and at each valid change); the owner of static credentials
  // reports its own.
  virtual void OnTlsCertificatesInstalled(const TlsCertificateExpiry& expiry) {}
};

// FileFingerprint describes `paths` (files or directories, symlinks followed) by
// resolved path, device, inode, size, mode, owner, mtime and ctime; a path that cannot
// be examined is described as missing. Reads no file contents.
std::string FileFingerprint(const std::vector<std::string>& paths);

// KeyringDiff names the keys `next` adds to, removes from or changes in `previous`
// (same key_id and version, other material or type), each list sorted. A key of one plain
// `<key_id>.pem` is named by its key_id, a version of a versioned key by its file stem
// `<key_id>.v<n>`, a changed minimum version as `<key_id>.min_version` and a changed
// primary version as `<key_id>.primary` (unless the primary is the newest version before
// and after: it moved with the version added).
struct KeyringDiff {
  std::vector<std::string> added;
  std::vector<std::string> removed;
  std::vector<std::string> changed;
  bool empty() const { return added.empty() && removed.empty() && changed.empty(); }
};
KeyringDiff DiffKeyrings(const KeyStore& previous, const KeyStore& next);

// KeyringFingerprint is the fingerprint of keyring directory `dir` described above.
std::string KeyringFingerprint(const std::string& dir);

class KeyringReloader {
 public:
  // `engine` must outlive the reloader; `observer` may be null, else must outlive it.
  // `loaded_fingerprint` is KeyringFingerprint(dir) taken before the engine's keyring
  // was loaded (so a change during that load is seen); empty: taken now.
  KeyringReloader(std::string dir, KeyStoreOptions options, CryptoEngine* engine,
                  ReloadObserver* observer, std::string loaded_fingerprint = "");

  // Reload loads the directory now. On success the engine uses it from the next call on
  // (an unchanged keyring is kept as it is) and one line is logged:
  //   keyring reloaded from <dir>: <n> keys (added: a, b; removed: c; changed: d)
  //   keyring reloaded from <dir>: <n> keys (unchanged)
  // On failure the engine keeps its keyring, an error line is logged
  //   keyring reload from <dir> failed, keeping the previous <n> keys: <reason>
  // and LoadFromDirectory's error is returned. Reloads are serialized.
  absl::Status Reload();
  // ReloadIfChanged reloads when the directory's fingerprint differs from the one taken
  // at the last attempt (or at construction); true when it attempted a reload. A
  // directory that failed to load is retried only once it changes again.
  bool ReloadIfChanged();

 private:
  absl::Status ReloadLocked(std::string fingerprint) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string dir_;
  const KeyStoreOptions options_;
  CryptoEngine* const engine_;
  ReloadObserver* const observer_;
  absl::Mutex mu_;
  std::string fingerprint_ ABSL_GUARDED_BY(mu_);
};

// ValidateTlsFiles checks the PEM files smcryptd serves TLS with: `cert` holds a
// certificate chain (at least one certificate), `key` a private key matching the first
// certificate, and `client_ca` (if not empty) at least one certificate. Errors:
// NotFound for an unreadable file, InvalidArgument naming the flag and the defect.
// Never includes key material.
absl::Status ValidateTlsFiles(const std::string& cert, const std::string& key,
                              const std::string& client_ca);

// CheckTlsFiles is ValidateTlsFiles returning the certificates' notAfter.
absl::StatusOr<TlsCertificateExpiry> CheckTlsFiles(const std::string& cert,
                                                   const std::string& key,
                                                   const std::string& client_ca);

// LogTlsCertificateExpiry logs one line per certificate of `expiry`:
//   TLS certificate valid until <RFC 3339>  certificate=server|client_ca not_after=<RFC 3339>
// a warning instead when it is less than 14 days away.
void LogTlsCertificateExpiry(const TlsCertificateExpiry& expiry);

// ReadTlsFile reads the PEM file `path` given by `flag` (at most 1 MiB, a regular file:
// ReadSecretFile) into wiped storage. Errors: NotFound "<flag>: cannot read <path> (...)",
// InvalidArgument "<flag>: <path>: <defect>".
absl::StatusOr<SecretData> ReadTlsFile(absl::string_view flag, const std::string& path);

class TlsFileCheck {
 public:
  // Create reads and validates the files (errors as ValidateTlsFiles; Internal if a
  // memory file cannot be made) and takes the fingerprint. `observer` may be null, else
  // must outlive the check.
  static absl::StatusOr<std::unique_ptr<TlsFileCheck>> Create(std::string cert,
                                                              std::string key,
                                                              std::string client_ca,
                                                              ReloadObserver* observer);
  ~TlsFileCheck();
  TlsFileCheck(const TlsFileCheck&) = delete;
  TlsFileCheck& operator=(const TlsFileCheck&) = delete;

  // The paths to give gRPC's provider: the private key and chain (for both its key and
  // its certificate file), and the client CA bundle (empty without --tls_client_ca).
  const std::string& identity_path() const { return identity_path_; }
  const std::string& client_ca_path() const { return client_ca_path_; }

  // CheckIfChanged, when the fingerprint changed since the last check, validates the
  // files; a valid set replaces the memory files (its notAfter reported and logged:
  // LogTlsCertificateExpiry) and logs "TLS certificate files
  // changed: valid, installed for new handshakes", an invalid one logs "TLS certificate
  // files changed and are invalid: <reason>; new handshakes keep the previous
  // certificate". The result is reported; true when it checked.
  bool CheckIfChanged();

 private:
  TlsFileCheck(std::string cert, std::string key, std::string client_ca,
               ReloadObserver* observer);
  absl::Status Install() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string cert_, key_, client_ca_;
  ReloadObserver* const observer_;
  absl::Mutex mu_;
  std::string fingerprint_ ABSL_GUARDED_BY(mu_);
  int identity_fd_ = -1;   // what identity_path_ names
  int client_ca_fd_ = -1;  // what client_ca_path_ names, or -1
  std::string identity_path_, client_ca_path_;
};

// PeriodicTask runs `task` every `interval` (> 0) on a thread of its own until it is
// destroyed; the destructor waits for a run in progress.
class PeriodicTask {
 public:
  PeriodicTask(absl::Duration interval, std::function<void()> task);
  ~PeriodicTask();
  PeriodicTask(const PeriodicTask&) = delete;
  PeriodicTask& operator=(const PeriodicTask&) = delete;

 private:
  absl::Notification stop_;
  std::thread thread_;
};

}  // namespace smcrypt::server

#endif  // SMCRYPT_SERVER_RELOAD_H_
