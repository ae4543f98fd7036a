#include "server/engine/reload.h"

#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <system_error>
#include <ctime>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "server/engine/logging.h"
#include "server/engine/secret_file.h"
#include "smcrypt/secret_data.h"

namespace smcrypt::server {
namespace {

namespace fs = std::filesystem;

void AppendFingerprint(const std::string& path, std::string* out) {
  std::error_code ec;
  const fs::path resolved = fs::canonical(path, ec);
  struct stat st {};
  if (ec || stat(path.c_str(), &st) != 0) {
    absl::StrAppend(out, path, " missing\n");
    return;
  }
  absl::StrAppend(out, path, " -> ", resolved.string(), " ", st.st_dev, ":", st.st_ino, " ",
                  st.st_size, " ", st.st_mode, " ", st.st_uid, ":", st.st_gid, " ",
                  st.st_mtim.tv_sec, ".", st.st_mtim.tv_nsec, " ", st.st_ctim.tv_sec, ".",
                  st.st_ctim.tv_nsec, "\n");
}

// The lists of a diff in the log line: at most kMaxListed ids each.
constexpr size_t kMaxListed = 20;

std::string ListIds(const std::vector<std::string>& ids) {
  if (ids.size() <= kMaxListed) return absl::StrJoin(ids, ", ");
  return absl::StrCat(absl::StrJoin(ids.begin(), ids.begin() + kMaxListed, ", "), " and ",
                      ids.size() - kMaxListed, " more");
}

bool SameKey(const StoredKey& a, const StoredKey& b) {
  return a.family == b.family && a.is_private == b.is_private &&
         a.is_symmetric == b.is_symmetric && a.public_key_der == b.public_key_der &&
         a.material.size() == b.material.size() &&
         (a.material.empty() ||
          CRYPTO_memcmp(a.material.data(), b.material.data(), a.material.size()) == 0);
}

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};

std::unique_ptr<BIO, BioFree> MemBio(const SecretData& text) {
  return std::unique_ptr<BIO, BioFree>(
      BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

// AsnTimeText formats a certificate time ("Jan  2 00:00:00 2020 GMT").
std::string AsnTimeText(const ASN1_TIME* t) {
  std::unique_ptr<BIO, BioFree> bio(BIO_new(BIO_s_mem()));
  if (bio == nullptr || ASN1_TIME_print(bio.get(), t) != 1) return "?";
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, n > 0 ? static_cast<size_t>(n) : 0);
}

// AsnTime is a certificate time as absl::Time (InfinitePast if it cannot be read).
absl::Time AsnTime(const ASN1_TIME* t) {
  struct tm tm {};
  if (t == nullptr || ASN1_TIME_to_tm(t, &tm) != 1) return absl::InfinitePast();
  return absl::FromTimeT(timegm(&tm));
}

// ReadCertificates parses every CERTIFICATE block of `text`; the first is returned, and
// `earliest_not_after` (if not null) is set to the earliest notAfter of them all.
absl::StatusOr<std::unique_ptr<X509, X509Free>> ReadCertificates(
    absl::string_view flag, const std::string& path, const SecretData& text,
    absl::Time* earliest_not_after = nullptr) {
  std::unique_ptr<BIO, BioFree> bio = MemBio(text);
  std::unique_ptr<X509, X509Free> first;
  int count = 0;
  absl::Time earliest = absl::InfiniteFuture();
  while (X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    std::unique_ptr<X509, X509Free> owned(cert);
    earliest = std::min(earliest, AsnTime(X509_get0_notAfter(cert)));
    if (count++ == 0) first = std::move(owned);
  }
  if (earliest_not_after != nullptr) *earliest_not_after = earliest;
  ERR_clear_error();  // the read that ends the loop leaves "no start line"
  if (first == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": ", path, " holds no PEM certificate"));
  }
  return first;
}

}  // namespace

absl::StatusOr<SecretData> ReadTlsFile(absl::string_view flag, const std::string& path) {
  absl::StatusOr<SecretData> text = ReadSecretFile(path, 1 << 20);
  if (text.ok()) return text;
  if (absl::IsNotFound(text.status()) || absl::IsPermissionDenied(text.status())) {
    return absl::NotFoundError(
        absl::StrCat(flag, ": cannot read ", path, " (", text.status().message(), ")"));
  }
  return absl::InvalidArgumentError(absl::StrCat(flag, ": ", path, ": ", text.status().message()));
}

std::string FileFingerprint(const std::vector<std::string>& paths) {
  std::string out;
  for (const std::string& p : paths) AppendFingerprint(p, &out);
  return out;
}

// DiffName names one version of a key in a diff: the key_id for a key of one plain
// `<key_id>.pem`, else `<key_id>.v<n>`.
std::string DiffName(const StoredKey& k) {
  return k.versioned ? absl::StrCat(k.key_id, ".v", k.version) : k.key_id;
}

KeyringDiff DiffKeyrings(const KeyStore& previous, const KeyStore& next) {
  KeyringDiff diff;
  // Versions are matched by key_id and number (a `<key_id>.pem` that gets a
  // `<key_id>.v2.pem` beside it stays the same version 1).
  auto id_version = [](const StoredKey& k) { return absl::StrCat(k.key_id, "|", k.version); };
  absl::flat_hash_map<std::string, const StoredKey*> before;
  for (const StoredKey* k : previous.entries()) before.emplace(id_version(*k), k);
  for (const StoredKey* k : next.entries()) {
    auto it = before.find(id_version(*k));
    if (it == before.end()) {
      diff.added.push_back(DiffName(*k));
      continue;
    }
    if (!SameKey(*it->second, *k)) diff.changed.push_back(DiffName(*k));
    before.erase(it);
  }
  // A new minimum or primary version of a key both hold changes the key, not its
  // versions: `<key_id>.min_version`, `<key_id>.primary`. A primary that is the newest
  // on both sides moved with an added version, which the diff names already.
  auto is_newest = [](const KeyStore& s, const std::string& id) {
    return s.PrimaryVersion(id) == s.AllVersions(id).back()->version;
  };
  for (const std::string& id : next.key_ids()) {
    if (previous.PrimaryVersion(id) == 0) continue;  // a key `previous` lacks
    if (previous.MinVersion(id) != next.MinVersion(id)) {
      diff.changed.push_back(absl::StrCat(id, ".min_version"));
    }
    if (previous.PrimaryVersion(id) != next.PrimaryVersion(id) &&
        !(is_newest(previous, id) && is_newest(next, id))) {
      diff.changed.push_back(absl::StrCat(id, ".primary"));
    }
  }
  for (const auto& [id, key] : before) diff.removed.push_back(DiffName(*key));
  std::sort(diff.added.begin(), diff.added.end());
  std::sort(diff.removed.begin(), diff.removed.end());
  std::sort(diff.changed.begin(), diff.changed.end());
  return diff;
}

// ---- KeyringReloader -------------------------------------------------------------------

std::string KeyringFingerprint(const std::string& dir) {
  std::vector<std::string> paths;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name[0] == '.') continue;  // as LoadFromDirectory
    paths.push_back(it->path().string());
  }
  std::sort(paths.begin(), paths.end());
  paths.insert(paths.begin(), dir);
  return FileFingerprint(paths);
}

KeyringReloader::KeyringReloader(std::string dir, KeyStoreOptions options,
                                 CryptoEngine* engine, ReloadObserver* observer,
                                 std::string loaded_fingerprint)
    : dir_(std::move(dir)), options_(options), engine_(engine), observer_(observer) {
  absl::MutexLock lock(&mu_);
  fingerprint_ =
      loaded_fingerprint.empty() ? KeyringFingerprint(dir_) : std::move(loaded_fingerprint);
}

absl::Status KeyringReloader::Reload() {
  absl::MutexLock lock(&mu_);
  return ReloadLocked(KeyringFingerprint(dir_));
}

bool KeyringReloader::ReloadIfChanged() {
  absl::MutexLock lock(&mu_);
  std::string now = KeyringFingerprint(dir_);
  if (now == fingerprint_) return false;
  ReloadLocked(std::move(now)).IgnoreError();  // logged and reported
  return true;
}

absl::Status KeyringReloader::ReloadLocked(std::string fingerprint) {
  // A load that overlaps a change of the directory may see a state in between (a Secret
  // update swaps ..data, then removes the links of dropped keys, then the old version):
  // it is repeated until the fingerprint after a load is the one before it, at most
  // kLoadAttempts times, and only that load's result counts.
  constexpr int kLoadAttempts = 5;
  const std::shared_ptr<const KeyStore> current = engine_->key_store();
  absl::StatusOr<std::unique_ptr<KeyStore>> loaded;
  for (int attempt = 1;; ++attempt) {
    // A version whose bytes `current` holds keeps its load time.
    loaded = KeyStore::LoadFromDirectory(dir_, options_, current.get());
    std::string after = KeyringFingerprint(dir_);
    const bool stable = after == fingerprint;
    fingerprint = std::move(after);
    if (stable || attempt == kLoadAttempts) break;
    absl::SleepFor(absl::Milliseconds(20));
  }
  fingerprint_ = std::move(fingerprint);
  if (!loaded.ok()) {
    LogError(absl::StrCat("keyring reload from ", dir_, " failed, keeping the previous ",
                          current->size(), " keys: ", loaded.status().message()));
    if (observer_ != nullptr) observer_->OnKeyringReload(false);
    return loaded.status();
  }
  std::shared_ptr<const KeyStore> next = *std::move(loaded);
  const KeyringDiff diff = DiffKeyrings(*current, *next);
  std::string what = "unchanged";
  if (!diff.empty()) {
    std::vector<std::string> parts;
    if (!diff.added.empty()) parts.push_back(absl::StrCat("added: ", ListIds(diff.added)));
    if (!diff.removed.empty()) parts.push_back(absl::StrCat("removed: ", ListIds(diff.removed)));
    if (!diff.changed.empty()) parts.push_back(absl::StrCat("changed: ", ListIds(diff.changed)));
    what = absl::StrJoin(parts, "; ");
    // An unchanged keyring is kept, with the primitives (and tables) already built.
    engine_->SetKeyStore(next);
  }
  LogInfo(absl::StrCat("keyring reloaded from ", dir_, ": ", next->size(), " keys (", what, ")"));
  if (observer_ != nullptr) {
    observer_->OnKeyringLoaded(*engine_->key_store());
    observer_->OnKeyringReload(true);
  }
  return absl::OkStatus();
}

// ---- TLS files -------------------------------------------------------------------------

namespace {

// TlsText is a validated set of TLS files: the private key followed by the certificate
// chain (what gRPC reads as both), and the client CA bundle.
struct TlsText {
  SecretData identity;
  std::string client_ca;
  TlsCertificateExpiry expiry;
};

absl::StatusOr<TlsText> ReadTlsFiles(const std::string& cert, const std::string& key,
                                     const std::string& client_ca) {
  absl::StatusOr<SecretData> cert_text = ReadTlsFile("--tls_cert", cert);
  if (!cert_text.ok()) return cert_text.status();
  absl::StatusOr<std::unique_ptr<X509, X509Free>> leaf =
      ReadCertificates("--tls_cert", cert, *cert_text);
  if (!leaf.ok()) return leaf.status();
  // An expired certificate fails every client's verification: refused. One not valid yet
  // (an issuer's clock a little ahead) is served, with a warning.
  if (X509_cmp_current_time(X509_get0_notAfter(leaf->get())) < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--tls_cert: ", cert, ": the certificate expired (notAfter ",
        AsnTimeText(X509_get0_notAfter(leaf->get())), ")"));
  }
  if (X509_cmp_current_time(X509_get0_notBefore(leaf->get())) > 0) {
    LogWarning(absl::StrCat("--tls_cert: ", cert, ": the certificate is not valid before ",
                            AsnTimeText(X509_get0_notBefore(leaf->get()))));
  }
  absl::StatusOr<SecretData> key_text = ReadTlsFile("--tls_key", key);
  if (!key_text.ok()) return key_text.status();
  std::unique_ptr<BIO, BioFree> bio = MemBio(*key_text);
  // No passphrase: an encrypted key fails here instead of prompting on the terminal.
  pem_password_cb* no_passphrase = [](char*, int, int, void*) { return 0; };
  std::unique_ptr<EVP_PKEY, PkeyFree> pkey(
      PEM_read_bio_PrivateKey(bio.get(), nullptr, no_passphrase, nullptr));
  ERR_clear_error();
  if (pkey == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("--tls_key: ", key, " holds no PEM private key"));
  }
  if (X509_check_private_key(leaf->get(), pkey.get()) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError(absl::StrCat(
        "--tls_key: ", key, " does not match the certificate in ", cert));
  }
  TlsText out;
  out.expiry.server = AsnTime(X509_get0_notAfter(leaf->get()));
  if (!client_ca.empty()) {
    absl::StatusOr<SecretData> ca_text = ReadTlsFile("--tls_client_ca", client_ca);
    if (!ca_text.ok()) return ca_text.status();
    absl::StatusOr<std::unique_ptr<X509, X509Free>> ca =
        ReadCertificates("--tls_client_ca", client_ca, *ca_text, &out.expiry.client_ca);
    if (!ca.ok()) return ca.status();
    out.client_ca = std::string(SecretDataAsStringView(*ca_text));
  }
  // PEM readers skip blocks of other types, so gRPC finds the key and the chain in one
  // text.
  out.identity.reserve(key_text->size() + 1 + cert_text->size());
  out.identity.insert(out.identity.end(), key_text->begin(), key_text->end());
  out.identity.push_back('\n');
  out.identity.insert(out.identity.end(), cert_text->begin(), cert_text->end());
  return out;
}

// MemoryFile returns a sealed memfd holding `text`, or -1.
int MemoryFile(const char* name, absl::string_view text) {
  const int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return -1;
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n <= 0) {
      close(fd);
      return -1;
    }
    done += static_cast<size_t>(n);
  }
  fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
  return fd;
}

// Replace makes `*fd` refer to a new memory file holding `text`: atomically (dup3) when
// `*fd` is open, so a reader opening /proc/self/fd/<*fd> sees the old or the new text.
bool Replace(int* fd, const char* name, absl::string_view text) {
  const int next = MemoryFile(name, text);
  if (next < 0) return false;
  if (*fd < 0) {
    *fd = next;
    return true;
  }
  const bool ok = dup3(next, *fd, O_CLOEXEC) == *fd;
  close(next);
  return ok;
}

}  // namespace

absl::Status ValidateTlsFiles(const std::string& cert, const std::string& key,
                              const std::string& client_ca) {
  return ReadTlsFiles(cert, key, client_ca).status();
}

absl::StatusOr<TlsCertificateExpiry> CheckTlsFiles(const std::string& cert,
                                                   const std::string& key,
                                                   const std::string& client_ca) {
  absl::StatusOr<TlsText> text = ReadTlsFiles(cert, key, client_ca);
  if (!text.ok()) return text.status();
  return text->expiry;
}

void LogTlsCertificateExpiry(const TlsCertificateExpiry& expiry) {
  const absl::Time now = absl::Now();
  for (const auto& [name, t] : {std::pair<const char*, absl::Time>{"server", expiry.server},
                                {"client_ca", expiry.client_ca}}) {
    if (t == absl::InfinitePast()) continue;
    const std::string when = absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone());
    if (t - now < absl::Hours(14 * 24)) {
      LogWarning(absl::StrCat("TLS certificate expires in less than 14 days, at ", when),
                 {{"certificate", name}, {"not_after", when}});
    } else {
      LogInfo(absl::StrCat("TLS certificate valid until ", when),
              {{"certificate", name}, {"not_after", when}});
    }
  }
}

absl::StatusOr<std::unique_ptr<TlsFileCheck>> TlsFileCheck::Create(std::string cert,
                                                                    std::string key,
                                                                    std::string client_ca,
                                                                    ReloadObserver* observer) {
  std::unique_ptr<TlsFileCheck> check(
      new TlsFileCheck(std::move(cert), std::move(key), std::move(client_ca), observer));
  absl::MutexLock lock(&check->mu_);
  check->fingerprint_ = FileFingerprint({check->cert_, check->key_, check->client_ca_});
  if (absl::Status s = check->Install(); !s.ok()) return s;
  check->identity_path_ = absl::StrCat("/proc/self/fd/", check->identity_fd_);
  if (check->client_ca_fd_ >= 0) {
    check->client_ca_path_ = absl::StrCat("/proc/self/fd/", check->client_ca_fd_);
  }
  if (access(check->identity_path_.c_str(), R_OK) != 0) {
    return absl::InternalError(absl::StrCat(
        "TLS with --reload_interval > 0 reads its certificates through ",
        check->identity_path_, ", which cannot be read (is /proc mounted?); "
        "--reload_interval=0 reads the files once at start"));
  }
  return check;
}

TlsFileCheck::TlsFileCheck(std::string cert, std::string key, std::string client_ca,
                           ReloadObserver* observer)
    : cert_(std::move(cert)),
      key_(std::move(key)),
      client_ca_(std::move(client_ca)),
      observer_(observer) {}

TlsFileCheck::~TlsFileCheck() {
  if (identity_fd_ >= 0) close(identity_fd_);
  if (client_ca_fd_ >= 0) close(client_ca_fd_);
}

absl::Status TlsFileCheck::Install() {
  absl::StatusOr<TlsText> text = ReadTlsFiles(cert_, key_, client_ca_);
  if (!text.ok()) return text.status();
  if (!Replace(&identity_fd_, "smcrypt-tls-identity", SecretDataAsStringView(text->identity)) ||
      (!client_ca_.empty() && !Replace(&client_ca_fd_, "smcrypt-tls-client-ca", text->client_ca))) {
    return absl::InternalError(
        absl::StrCat("cannot make a memory file for the TLS certificates: ", strerror(errno)));
  }
  LogTlsCertificateExpiry(text->expiry);
  if (observer_ != nullptr) observer_->OnTlsCertificatesInstalled(text->expiry);
  return absl::OkStatus();
}

bool TlsFileCheck::CheckIfChanged() {
  absl::MutexLock lock(&mu_);
  std::string now = FileFingerprint({cert_, key_, client_ca_});
  if (now == fingerprint_) return false;
  fingerprint_ = std::move(now);
  const absl::Status s = Install();
  if (s.ok()) {
    LogInfo("TLS certificate files changed: valid, installed for new handshakes");
  } else {
    LogError(absl::StrCat("TLS certificate files changed and are invalid: ", s.message(),
                          "; new handshakes keep the previous certificate"));
  }
  if (observer_ != nullptr) observer_->OnTlsCertificateReload(s.ok());
  return true;
}

// ---- PeriodicTask ----------------------------------------------------------------------

PeriodicTask::PeriodicTask(absl::Duration interval, std::function<void()> task)
    : thread_([this, interval, task = std::move(task)] {
        while (!stop_.WaitForNotificationWithTimeout(interval)) task();
      }) {}

PeriodicTask::~PeriodicTask() {
  stop_.Notify();
  thread_.join();
}

}  // namespace smcrypt::server
