// summary.cc — per-family tables and the study's ratio tables from one run's results.
//
// Every figure is a median over the repetitions of its case, shown with its coefficient
// of variation ("±"); every ratio is the ratio of the two medians followed by the range
// (min–max) of the per-repetition ratios, repetition k of one case against repetition k
// of the other (each case's repetitions in the order they ran; with random interleaving
// they ran at random points of the whole run, so the range shows how far the machine's
// drift moves the ratio).
#include "bench/smcrypt_bench/summary.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "bench/paper_figures.h"
#include "bench/smcrypt_bench/bench_util.h"

namespace smcrypt::bench {
namespace {

// The study signs short messages; smcrypt-bench's signature cases use 32 bytes.
constexpr size_t kPaperSignBytes = kSignMessageSize;

struct CaseKey {
  std::string impl, alg, op;
  size_t bytes = 0;
};

bool ParseName(const std::string& name, CaseKey* key) {
  std::vector<std::string> parts = absl::StrSplit(name, '/');
  if (parts.size() != 4) return false;
  key->impl = parts[0];
  key->alg = parts[1];
  key->op = parts[2];
  key->bytes = std::strtoull(parts[3].c_str(), nullptr, 10);
  return true;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Coefficient of variation (sample standard deviation / mean); 0 below two values.
double Cv(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  double mean = 0;
  for (double x : v) mean += x;
  mean /= v.size();
  if (mean <= 0) return 0;
  double ss = 0;
  for (double x : v) ss += (x - mean) * (x - mean);
  return std::sqrt(ss / (v.size() - 1)) / mean;
}

// Table: (alg, op) -> bytes -> impl -> result.
using Table = std::map<std::pair<std::string, std::string>,
                       std::map<size_t, std::map<std::string, Result>>>;

Table Index(const std::map<std::string, Result>& results) {
  Table t;
  for (const auto& [name, r] : results) {
    CaseKey k;
    if (ParseName(name, &k)) t[{k.alg, k.op}][k.bytes][k.impl] = r;
  }
  return t;
}

const Result* Find(const Table& t, const std::string& alg, const std::string& op, size_t bytes,
                   const std::string& impl) {
  auto a = t.find({alg, op});
  if (a == t.end()) return nullptr;
  auto b = a->second.find(bytes);
  if (b == a->second.end()) return nullptr;
  auto c = b->second.find(impl);
  return c == b->second.end() ? nullptr : &c->second;
}

struct Family {
  const char* title;
  bool ops;  // ops/s rather than MB/s
  // SM algorithm -> international counterparts (measured with OpenSSL).
  std::vector<std::pair<std::string, std::vector<std::string>>> algs;
};

const std::vector<Family>& Families() {
  static const std::vector<Family> kFamilies = {
      {"Hash and MAC (MB/s)", false,
       {{"SM3", {"SHA-256"}}, {"HMAC-SM3", {"HMAC-SHA-256"}}, {"SM3-KDF", {}}}},
      {"Block modes, no padding (MB/s)", false,
       {{"SM4-ECB", {"AES-128-ECB"}}, {"SM4-CBC", {"AES-128-CBC"}}, {"SM4-CTR", {"AES-128-CTR"}},
        {"SM4-CFB", {"AES-128-CFB"}}, {"SM4-OFB", {"AES-128-OFB"}}, {"SM4-XTS", {}}}},
      {"AEAD: 12-byte nonce, 16-byte tag, no AAD (MB/s)", false,
       {{"SM4-GCM", {"AES-128-GCM"}}, {"SM4-CCM", {"AES-128-CCM"}}}},
      {"Signatures over a 32-byte message (ops/s)", true,
       {{"SM2", {"ECDSA-P256", "ECDSA-SECP256K1"}}}},
      {"Public-key encryption (ops/s)", true,
       {{"SM2", {"RSA-2048-OAEP", "RSA-3072-OAEP"}}}},
      {"Hybrid encryption, HPKE base mode, whole message incl. key encapsulation (MB/s)", false,
       {{"HPKE-SM2-SM3-SM4GCM", {"HPKE-P256-SHA256-AES128GCM"}}}},
  };
  return kFamilies;
}

// A figure: MB/s, or ops/s when `ops`.
double Value(const Result& r, bool ops) {
  return ops ? r.items_per_second : r.bytes_per_second / 1e6;
}
std::vector<double> Reps(const Result& r, bool ops) {
  std::vector<double> v = ops ? r.items_reps : r.bytes_reps;
  if (!ops) {
    for (double& x : v) x /= 1e6;
  }
  return v;
}

std::string Fmt(double v) {
  if (v >= 100) return absl::StrFormat("%.0f", v);
  if (v >= 10) return absl::StrFormat("%.1f", v);
  return absl::StrFormat("%.2f", v);
}

// "±2.3%": the coefficient of variation over the repetitions; "" with fewer than two.
std::string CvText(const Result& r, bool ops) {
  const std::vector<double> v = Reps(r, ops);
  if (v.size() < 2) return "";
  const double cv = 100 * Cv(v);
  return cv < 10 ? absl::StrFormat("±%.1f%%", cv) : absl::StrFormat("±%.0f%%", cv);
}

// A figure with its spread: "377 ±2.3%".
std::string FmtSpread(const Result* r, bool ops) {
  if (r == nullptr) return "-";
  const std::string cv = CvText(*r, ops);
  return cv.empty() ? Fmt(Value(*r, ops)) : Fmt(Value(*r, ops)) + " " + cv;
}

// RatioStat is num/den: the ratio of the medians and the range of the ratios of
// repetition k of num to repetition k of den.
struct RatioStat {
  bool ok = false;
  double median = 0, lo = 0, hi = 0;
  size_t pairs = 0;
};

RatioStat RatioOf(const Result* num, const Result* den, bool ops) {
  RatioStat s;
  if (num == nullptr || den == nullptr) return s;
  const double d = Value(*den, ops);
  if (d <= 0 || Value(*num, ops) <= 0) return s;
  s.ok = true;
  s.median = Value(*num, ops) / d;
  const std::vector<double> a = Reps(*num, ops), b = Reps(*den, ops);
  for (size_t k = 0; k < std::min(a.size(), b.size()); ++k) {
    if (b[k] <= 0) continue;
    const double r = a[k] / b[k];
    s.lo = s.pairs == 0 ? r : std::min(s.lo, r);
    s.hi = s.pairs == 0 ? r : std::max(s.hi, r);
    ++s.pairs;
  }
  return s;
}

// "1.53 (1.41–1.62)"; without repetition pairs just "1.53". `decimals` < 0: two
// decimals below 10, one below 100, none above.
std::string FmtRatio(const RatioStat& s, int decimals = -1) {
  if (!s.ok) return "-";
  if (decimals < 0) decimals = s.median >= 100 ? 0 : s.median >= 10 ? 1 : 2;
  const std::string m = absl::StrFormat("%.*f", decimals, s.median);
  if (s.pairs < 2) return m;
  return absl::StrFormat("%s (%.*f–%.*f)", m, decimals, s.lo, decimals, s.hi);
}

std::string RatioText(const Result* num, const Result* den, bool ops, int decimals = -1) {
  return FmtRatio(RatioOf(num, den, ops), decimals);
}

std::string SizeName(size_t b) {
  if (b >= (size_t{1} << 30) && b % (size_t{1} << 30) == 0) return absl::StrCat(b >> 30, " GiB");
  if (b >= (size_t{1} << 20) && b % (size_t{1} << 20) == 0) return absl::StrCat(b >> 20, " MiB");
  if (b >= 1024 && b % 1024 == 0) return absl::StrCat(b >> 10, " KiB");
  return absl::StrCat(b, " B");
}

// Width on a terminal: UTF-8 code points ("–" and "±" are one column each).
size_t DisplayWidth(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::string Pad(const std::string& s, size_t width, bool left) {
  const size_t w = DisplayWidth(s);
  const std::string fill(width > w ? width - w : 0, ' ');
  return left ? s + fill : fill + s;
}

void PrintRow(const std::vector<std::string>& cells, const std::vector<size_t>& widths,
              std::ostream& out) {
  std::string line;
  for (size_t i = 0; i < cells.size(); ++i) {
    line += i == 0 ? Pad(cells[i], widths[i], true) : "  " + Pad(cells[i], widths[i], false);
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  out << line << "\n";
}

void PrintTable(const std::vector<std::vector<std::string>>& rows, std::ostream& out) {
  std::vector<size_t> widths;
  for (const auto& r : rows) {
    widths.resize(std::max(widths.size(), r.size()), 0);
    for (size_t i = 0; i < r.size(); ++i) widths[i] = std::max(widths[i], DisplayWidth(r[i]));
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    PrintRow(rows[i], widths, out);
    if (i == 0) {
      size_t total = 0;
      for (size_t w : widths) total += w + 2;
      out << std::string(total - 2, '-') << "\n";
    }
  }
}

// ShortImpl drops "smcrypt." for ratio column headers.
std::string ShortImpl(const std::string& impl) {
  return impl.rfind("smcrypt.", 0) == 0 ? impl.substr(8) : impl;
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The dispatched back end's result for alg/op/bytes, or nullptr (not measured).
const Result* Dispatched(const Table& t, const Dispatch& dispatch, const std::string& alg,
                         const std::string& op, size_t bytes, std::string* impl = nullptr) {
  const std::string d = DispatchedImpl(dispatch, alg, op);
  if (impl != nullptr) *impl = d;
  return d.empty() ? nullptr : Find(t, alg, op, bytes, d);
}

// PrintSm2Batches compares the SM2 batch cases with the single operations of the same run
// (per signature, on the dispatched SM2 back end: what a caller gets without batching) and
// the SM2 encryption KDF pair (lane-parallel vs serial SM3 KDF).
void PrintSm2Batches(const Table& t, const Dispatch& dispatch, std::ostream& out) {
  std::vector<std::vector<std::string>> rows = {
      {"SM2", "batch", "batch ops/s", "single", "single ops/s", "batch/single"}};
  for (const std::string op : {"sign", "verify", "verify_uncached"}) {
    auto b = t.find({"SM2", op + "_batch"});
    if (b == t.end()) continue;
    std::string single_impl;
    const Result* single = Dispatched(t, dispatch, "SM2", op, kSignMessageSize, &single_impl);
    for (const auto& [items, by_impl] : b->second) {
      for (const auto& [impl, r] : by_impl) {
        rows.push_back({op, absl::StrCat(items, " per call, ", impl), FmtSpread(&r, true),
                        single ? single_impl : "-", FmtSpread(single, true),
                        RatioText(&r, single, true)});
      }
    }
  }
  // Hybrid encryption of 64 messages per EncryptMany call vs one Encrypt per message.
  for (const std::string alg : {"HPKE-SM2-SM3-SM4GCM", "HPKE-P256-SHA256-AES128GCM"}) {
    auto b = t.find({alg, "encrypt_batch64"});
    if (b == t.end()) continue;
    for (const auto& [bytes, by_impl] : b->second) {
      for (const auto& [impl, r] : by_impl) {
        const Result* s = Find(t, alg, "encrypt", bytes, impl);
        if (s == nullptr || s->items_per_second <= 0) continue;
        rows.push_back({absl::StrCat(alg, " encrypt ", SizeName(bytes)),
                        "64 per call, " + impl, FmtSpread(&r, true), "one per call",
                        FmtSpread(s, true), RatioText(&r, s, true)});
      }
    }
  }
  auto lanes = t.find({"SM2", "encrypt_kdf_lanes"});
  auto serial = t.find({"SM2", "encrypt_kdf_serial"});
  if (lanes != t.end() && serial != t.end()) {
    for (const auto& [bytes, by_impl] : lanes->second) {
      for (const auto& [impl, r] : by_impl) {
        const Result* s = Find(t, "SM2", "encrypt_kdf_serial", bytes, impl);
        if (s == nullptr || s->items_per_second <= 0) continue;
        rows.push_back({absl::StrCat("encrypt ", SizeName(bytes)), "KDF in lanes, " + impl,
                        FmtSpread(&r, true), "KDF serial", FmtSpread(s, true),
                        RatioText(&r, s, true)});
      }
    }
  }
  if (rows.size() == 1) return;
  out << "\n== SM2 and hybrid batches, and the lane-parallel KDF, against the single path "
         "(ops/s) ==\n\n";
  PrintTable(rows, out);
}

// PrintP256Floor compares HPKE-P256-SHA256-AES128GCM with OpenSSL's own floor for it: a
// seal (DHKEM(P-256) Encap) needs one P-256 key generation and one ECDH derive, so its floor
// is 1 / (t_keygen + t_derive); an open (Decap) needs the derive alone, 1 / t_derive. Each
// floor is taken per repetition k from repetition k of the OpenSSL cases, so the range
// pairs figures measured together.
void PrintP256Floor(const Table& t, std::ostream& out) {
  const Result* kg = Find(t, "P-256", "keygen", 0, "openssl");
  const Result* dr = Find(t, "P-256", "ecdh_derive", 0, "openssl");
  if (kg == nullptr || dr == nullptr) return;
  Result seal_floor;
  auto combine = [](double a, double b) { return a > 0 && b > 0 ? 1 / (1 / a + 1 / b) : 0.0; };
  seal_floor.items_per_second = combine(kg->items_per_second, dr->items_per_second);
  for (size_t k = 0; k < std::min(kg->items_reps.size(), dr->items_reps.size()); ++k) {
    seal_floor.items_reps.push_back(combine(kg->items_reps[k], dr->items_reps[k]));
  }
  if (!seal_floor.items_reps.empty()) {
    seal_floor.items_per_second = Median(seal_floor.items_reps);
  }
  std::vector<std::vector<std::string>> rows = {
      {"HPKE-P256-SHA256-AES128GCM", "size", "ops/s", "floor", "floor ops/s", "ratio to floor"}};
  for (const std::string op : {"encrypt", "decrypt"}) {
    auto a = t.find({"HPKE-P256-SHA256-AES128GCM", op});
    if (a == t.end()) continue;
    const bool seal = op == "encrypt";
    const Result* floor = seal ? &seal_floor : dr;
    for (const auto& [bytes, by_impl] : a->second) {
      auto r = by_impl.find("openssl");
      if (r == by_impl.end() || bytes > 16384) continue;
      rows.push_back({op, SizeName(bytes), FmtSpread(&r->second, true),
                      seal ? "keygen + derive" : "derive", FmtSpread(floor, true),
                      RatioText(&r->second, floor, true)});
    }
  }
  if (rows.size() == 1) return;
  out << "\n== HPKE-P256-SHA256-AES128GCM against OpenSSL's P-256 floor (ops/s) ==\n"
      << "The openssl/HPKE-P256-SHA256-AES128GCM cases are smcrypt's RFC 9180 code over "
         "OpenSSL's EVP (what smcryptd serves). Floor of a seal = 1 / (t_keygen + t_derive), "
         "of an open = 1 / t_derive, from openssl/P-256/keygen "
      << FmtSpread(kg, true) << " ops/s and openssl/P-256/ecdh_derive " << FmtSpread(dr, true)
      << " ops/s in this run.\n\n";
  PrintTable(rows, out);
}

// PrintHybridVsPublicKey is the blockchain study's "ECC" vs "ECC+AES" comparison: the
// whole payload under SM2 public-key encryption (C1C3C2) against HPKE with the SM suite,
// per size, both on the dispatched SM2 back end, with the P-256 suite and OpenSSL's SM2
// beside them. (The P-256 suite's floor, its key agreement alone, is in PrintP256Floor.)
void PrintHybridVsPublicKey(const Table& t, const Dispatch& dispatch, std::ostream& out) {
  const std::string hpke_sm = "HPKE-SM2-SM3-SM4GCM", hpke_p256 = "HPKE-P256-SHA256-AES128GCM";
  for (const std::string op : {"encrypt", "decrypt"}) {
    std::vector<std::vector<std::string>> rows = {
        {"size", "smcrypt SM2", "smcrypt HPKE-SM", "HPKE-SM/SM2", "openssl SM2",
         "openssl HPKE-P256", "HPKE-SM/HPKE-P256"}};
    for (size_t bytes : HybridSizes()) {
      const Result* sm2 = Dispatched(t, dispatch, "SM2", op, bytes);
      const Result* hyb = Dispatched(t, dispatch, hpke_sm, op, bytes);
      const Result* o_sm2 = Find(t, "SM2", op, bytes, "openssl");
      const Result* o_p256 = Find(t, hpke_p256, op, bytes, "openssl");
      if (sm2 == nullptr && hyb == nullptr) continue;
      rows.push_back({SizeName(bytes), FmtSpread(sm2, false), FmtSpread(hyb, false),
                      RatioText(hyb, sm2, false), FmtSpread(o_sm2, false),
                      FmtSpread(o_p256, false), RatioText(hyb, o_p256, false)});
    }
    if (rows.size() == 1) continue;
    out << "\n== \"ECC\" vs \"ECC+AES\": public-key vs hybrid encryption of the whole payload, "
        << op << " (MB/s) ==\nSM2 = SM2 public-key encryption (C1C3C2); HPKE-SM = " << hpke_sm
        << "; HPKE-P256 = " << hpke_p256 << "; smcrypt on the dispatched SM2 back end\n";
    PrintTable(rows, out);
  }
}

std::string OpName(const std::string& op) {
  if (op == "batch16") return "batch of 16";
  if (op == "encrypt16") return "encrypt, 16 keys";
  if (op == "encrypt_batch64") return "encrypt, 64 per call";
  return op;
}

// PrintBackEnds shows, for each headline case that several smcrypt back ends ran, every
// back end against the one dispatch chose: whether dispatch picked the fastest.
void PrintBackEnds(const Table& t, const std::vector<std::string>& smcrypt_impls,
                   const Dispatch& dispatch, std::ostream& out) {
  std::vector<std::vector<std::string>> rows = {
      {"case", "unit", "back end", "value", "back end/dispatched"}};
  for (const HeadlineCase& c : HeadlineCases()) {
    std::string d_impl;
    const Result* d = Dispatched(t, dispatch, c.alg, c.op, c.bytes, &d_impl);
    if (d == nullptr) continue;
    std::vector<std::string> others;
    for (const std::string& s : smcrypt_impls) {
      if (s != d_impl && Find(t, c.alg, c.op, c.bytes, s) != nullptr) others.push_back(s);
    }
    if (others.empty()) continue;
    const bool ops = std::string(c.alg) == "SM2";
    const std::string name = absl::StrCat(c.alg, " ", OpName(c.op), " ", SizeName(c.bytes));
    const std::string unit = ops ? "ops/s" : "MB/s";
    rows.push_back({name, unit, ShortImpl(d_impl) + " (dispatched)", FmtSpread(d, ops), "1"});
    for (const std::string& s : others) {
      const Result* r = Find(t, c.alg, c.op, c.bytes, s);
      rows.push_back({"", "", ShortImpl(s), FmtSpread(r, ops), RatioText(r, d, ops)});
    }
  }
  if (rows.size() == 1) return;
  out << "\n== Every back end against the dispatched one, headline cases ==\n"
         "back end/dispatched > 1: that back end was faster than the one dispatch chose on this "
         "CPU; a range that reaches 1 is no measured difference.\n\n";
  PrintTable(rows, out);
}

}  // namespace

std::string DispatchedImpl(const Dispatch& dispatch, const std::string& alg,
                           const std::string& op) {
  auto get = [&](const char* a) -> std::string {
    auto it = dispatch.find(a);
    return it == dispatch.end() ? "" : it->second;
  };
  std::string kernel;
  if (alg == "SM3" || alg == "HMAC-SM3" || alg == "SM3-KDF") {
    const std::string sm3 = get("SM3");
    const size_t plus = sm3.find('+');
    const std::string single = sm3.substr(0, plus);
    const std::string multi = plus == std::string::npos ? single : sm3.substr(plus + 1);
    // Batches and the KDF run in lanes on a multi-buffer back end when dispatch has one.
    kernel = op == "batch16" || alg == "SM3-KDF" ? multi : single;
  } else if (alg.rfind("SM4-", 0) == 0) {
    kernel = get("SM4");
  } else if (alg == "SM2" || alg == "HPKE-SM2-SM3-SM4GCM") {
    // The SM2 batch cases name the lane back end they run on; dispatch has no other.
    if (EndsWith(op, "_batch")) return "";
    kernel = get("SM2");
  }
  return kernel.empty() ? "" : "smcrypt." + kernel;
}

const std::vector<HeadlineCase>& HeadlineCases() {
  static const std::vector<HeadlineCase> kCases = {
      {"SM3", "hash", 64, "SHA-256", "hash"},
      {"SM3", "hash", 8192, "SHA-256", "hash"},
      {"SM3", "hash", 1048576, "SHA-256", "hash"},
      {"SM3", "batch16", 1024, "SHA-256", "hash"},
      {"HMAC-SM3", "mac", 1024, "HMAC-SHA-256", "mac"},
      {"SM4-ECB", "encrypt", 16384, "AES-128-ECB", "encrypt"},
      {"SM4-CTR", "encrypt", 16384, "AES-128-CTR", "encrypt"},
      {"SM4-CBC", "encrypt", 16384, "AES-128-CBC", "encrypt"},
      {"SM4-CBC", "decrypt", 16384, "AES-128-CBC", "decrypt"},
      {"SM4-CBC", "encrypt16", 1024, "AES-128-CBC", "encrypt"},
      {"SM4-GCM", "encrypt", 1024, "AES-128-GCM", "encrypt"},
      {"SM4-GCM", "encrypt", 16384, "AES-128-GCM", "encrypt"},
      {"SM4-GCM", "decrypt", 16384, "AES-128-GCM", "decrypt"},
      {"SM4-CCM", "encrypt", 16384, "AES-128-CCM", "encrypt"},
      {"SM2", "sign", kSignMessageSize, "ECDSA-P256", "sign"},
      {"SM2", "verify", kSignMessageSize, "ECDSA-P256", "verify"},
      {"SM2", "encrypt", 32, "RSA-2048-OAEP", "encrypt"},
      {"SM2", "decrypt", 32, "RSA-2048-OAEP", "decrypt"},
      {"HPKE-SM2-SM3-SM4GCM", "encrypt", 1024, "HPKE-P256-SHA256-AES128GCM", "encrypt"},
      {"HPKE-SM2-SM3-SM4GCM", "decrypt", 1024, "HPKE-P256-SHA256-AES128GCM", "decrypt"},
      {"HPKE-SM2-SM3-SM4GCM", "encrypt", 1048576, "HPKE-P256-SHA256-AES128GCM", "encrypt"},
      {"HPKE-SM2-SM3-SM4GCM", "encrypt_batch64", 1024, "HPKE-P256-SHA256-AES128GCM",
       "encrypt_batch64"},
  };
  return kCases;
}

std::string HeadlineBackEndFilter() {
  std::vector<std::string> cases;
  for (const HeadlineCase& c : HeadlineCases()) {
    cases.push_back(absl::StrCat(c.alg, "/", c.op, "/", c.bytes));
  }
  return absl::StrCat("^smcrypt\\.[a-z0-9_]+/(", absl::StrJoin(cases, "|"), ")$");
}

std::string HeadlineDispatchContext(const Dispatch& dispatch) {
  std::vector<std::string> items;
  for (const HeadlineCase& c : HeadlineCases()) {
    const std::string d = DispatchedImpl(dispatch, c.alg, c.op);
    if (!d.empty()) items.push_back(absl::StrCat(c.alg, "/", c.op, "/", c.bytes, "=", d));
  }
  return absl::StrJoin(items, ",");
}

void SummaryReporter::ReportRuns(const std::vector<Run>& runs) {
  std::vector<Run> shown;
  for (const Run& run : runs) {
    const bool repetition = run.run_type == Run::RT_Iteration && run.repetitions > 1;
    // Failed cases have no aggregates: show their first repetition's error.
    if (console_repetitions_ || !repetition || (run.error_occurred && run.repetition_index <= 0)) {
      shown.push_back(run);
    }
    if (run.error_occurred) continue;
    auto counter = [&run](const char* name) {
      auto c = run.counters.find(name);
      return c == run.counters.end() ? 0.0 : double(c->second.value);
    };
    const std::pair<double, double> v = {counter("bytes_per_second"),
                                         counter("items_per_second")};
    Collected& c = collected_[run.run_name.function_name];
    if (run.run_type == Run::RT_Iteration) {
      c.reps[run.repetition_index < 0 ? 0 : run.repetition_index] = v;
    } else if (run.aggregate_name == "median") {
      c.has_median = true;
      c.median = v;
    }
  }
  if (!shown.empty()) ConsoleReporter::ReportRuns(shown);
}

std::map<std::string, Result> SummaryReporter::results() const {
  std::map<std::string, Result> out;
  for (const auto& [name, c] : collected_) {
    Result r;
    if (!c.reps.empty()) {
      for (const auto& [index, v] : c.reps) {
        r.bytes_reps.push_back(v.first);
        r.items_reps.push_back(v.second);
      }
      r.bytes_per_second = Median(r.bytes_reps);
      r.items_per_second = Median(r.items_reps);
    } else if (c.has_median) {
      r.bytes_per_second = c.median.first;
      r.items_per_second = c.median.second;
    } else {
      continue;
    }
    out[name] = r;
  }
  return out;
}

bool SummaryReporter::aggregates_only() const {
  for (const auto& [name, c] : collected_) {
    if (c.reps.empty() && c.has_median) return true;
  }
  return false;
}

void PrintSummary(const std::map<std::string, Result>& results,
                  const std::vector<std::string>& smcrypt_impls, const Dispatch& dispatch,
                  std::ostream& out) {
  const Table t = Index(results);
  const std::vector<std::string> peers = {"openssl", "libgcrypt", "botan"};
  size_t reps = 0;
  for (const auto& [name, r] : results) reps = std::max(reps, r.items_reps.size());
  out << "\nsmcrypt-bench summary: medians of " << reps
      << " repetition(s) of every case, with ±: the coefficient of variation over the "
         "repetitions. Ratio = smcrypt throughput / other throughput (> 1: smcrypt is faster): "
         "the ratio of the medians, then (min–max) the range of the per-repetition ratios, "
         "repetition k of one case against repetition k of the other in the order they ran. "
         "A ratio whose range reaches 1 shows no measured difference.\n";
  for (const Family& f : Families()) {
    bool printed_title = false;
    for (const auto& [alg, counterparts] : f.algs) {
      std::set<std::string> ops;
      for (const auto& [key, by_size] : t) {
        if (key.first == alg) ops.insert(key.second);
      }
      for (const std::string& op : ops) {
        // SM2's signature ops belong to the signature family, its encryption ops to the other.
        const bool sig_op = op == "sign" || op == "verify" || op == "sign_batch" ||
                            op == "verify_batch" || op == "verify_uncached" ||
                            op == "verify_uncached_batch";
        if (alg == "SM2" && sig_op != (std::string(f.title).rfind("Signatures", 0) == 0)) continue;
        const auto& by_size = t.at({alg, op});
        // Columns present for this (alg, op).
        std::vector<std::string> impls;
        for (const std::string& s : smcrypt_impls) {
          for (const auto& [bytes, m] : by_size) {
            if (m.count(s)) {
              impls.push_back(s);
              break;
            }
          }
        }
        if (impls.empty()) continue;
        std::vector<std::string> peer_cols;
        for (const std::string& p : peers) {
          for (const auto& [bytes, m] : by_size) {
            if (m.count(p)) {
              peer_cols.push_back(p);
              break;
            }
          }
        }
        std::vector<std::string> cps;
        for (const std::string& c : counterparts) {
          if (t.count({c, op})) cps.push_back(c);
        }
        if (!printed_title) {
          out << "\n== " << f.title << " ==\n";
          printed_title = true;
        }
        const std::string dispatched = DispatchedImpl(dispatch, alg, op);
        out << "\n" << alg << " " << op;
        if (std::find(impls.begin(), impls.end(), dispatched) != impls.end()) {
          out << " (dispatched: " << ShortImpl(dispatched) << ")";
        }
        out << "\n";
        std::vector<std::vector<std::string>> rows;
        std::vector<std::string> header = {"size"};
        for (const auto& s : impls) header.push_back(s);
        for (const auto& p : peer_cols) header.push_back(p);
        for (const auto& c : cps) header.push_back("openssl " + c);
        const bool has_openssl =
            std::find(peer_cols.begin(), peer_cols.end(), "openssl") != peer_cols.end();
        for (const auto& s : impls) {
          if (has_openssl) header.push_back(ShortImpl(s) + "/openssl");
          for (const auto& c : cps) header.push_back(ShortImpl(s) + "/" + c);
        }
        rows.push_back(header);
        for (const auto& [bytes, m] : by_size) {
          // Batch cases carry the batch size where the others carry bytes.
          const bool batch = EndsWith(op, "_batch");
          std::vector<std::string> row = {batch ? absl::StrCat(bytes, " sigs") : SizeName(bytes)};
          auto cell = [&](const std::string& impl, const std::string& a) -> const Result* {
            return Find(t, a, op, bytes, impl);
          };
          for (const auto& s : impls) row.push_back(FmtSpread(cell(s, alg), f.ops));
          for (const auto& p : peer_cols) row.push_back(FmtSpread(cell(p, alg), f.ops));
          for (const auto& c : cps) row.push_back(FmtSpread(cell("openssl", c), f.ops));
          for (const auto& s : impls) {
            const Result* mine = cell(s, alg);
            if (has_openssl) row.push_back(RatioText(mine, cell("openssl", alg), f.ops));
            for (const auto& c : cps) row.push_back(RatioText(mine, cell("openssl", c), f.ops));
          }
          rows.push_back(row);
        }
        PrintTable(rows, out);
      }
    }
  }
  PrintHybridVsPublicKey(t, dispatch, out);
  PrintSm2Batches(t, dispatch, out);
  PrintP256Floor(t, out);
  PrintBackEnds(t, smcrypt_impls, dispatch, out);
}

namespace {

// The result of `impl`'s `alg`/`op` at `bytes`, or nullptr when not measured. The
// implementation "smcrypt" means the dispatched back end.
const Result* Get(const Table& t, const Dispatch& dispatch, const std::string& impl,
                  const std::string& alg, const std::string& op, size_t bytes) {
  if (impl == "smcrypt") return Dispatched(t, dispatch, alg, op, bytes);
  return Find(t, alg, op, bytes, impl);
}

}  // namespace

void PrintPaperView(const std::map<std::string, Result>& results, const Dispatch& dispatch,
                    std::ostream& out) {
  const Table t = Index(results);
  const std::string sm = "smcrypt";
  auto ops = [&](const std::string& impl, const std::string& alg, const std::string& op,
                 size_t bytes) { return Get(t, dispatch, impl, alg, op, bytes); };
  // The study's ratios with three decimals, each with its range over repetition pairs.
  auto ratio = [](const Result* num, const Result* den) { return RatioText(num, den, true, 3); };
  out << "\nPaper view: Hu, Yang, Xiong, Wu, \"SM Algorithm Analysis and Software Performance "
         "Research\", Netinfo Security 21(10):8-16, 2021. Published columns are the study's "
         "(its vendor \"A\" and OpenSSL 1.1-era figures on its machine); measured columns are "
         "this run's, ratio of medians (range of per-repetition ratios). \"smcrypt\" is the back "
         "end dispatch chose on this CPU.\n";

  // Table 2: SM3/SHA-256 running-time ratio (> 1: SM3 is slower).
  {
    out << "\nSM3 / SHA-256 running-time ratio\n";
    const auto& sizes = paper::kHashSizes;
    const auto& pub_a = paper::kSm3OverSha256VendorA;
    const auto& pub_ossl = paper::kSm3OverSha256OpenSsl;
    std::vector<std::vector<std::string>> rows = {
        {"size", "paper A", "paper OpenSSL", "openssl", sm + "/openssl SHA-256"}};
    for (size_t i = 0; i < 6; ++i) {
      const Result* sha = ops("openssl", "SHA-256", "hash", sizes[i]);
      rows.push_back({SizeName(sizes[i]), absl::StrFormat("%.4f", pub_a[i]),
                      absl::StrFormat("%.4f", pub_ossl[i]),
                      ratio(sha, ops("openssl", "SM3", "hash", sizes[i])),
                      ratio(sha, ops(sm, "SM3", "hash", sizes[i]))});
    }
    PrintTable(rows, out);
  }

  // Table 5: signature running-time ratios.
  {
    out << "\nSignature running-time ratios (> 1: the numerator is slower)\n";
    std::vector<std::vector<std::string>> rows = {
        {"ratio", "op", "paper", "measured (openssl)", "measured (" + sm + " SM2)"}};
    const auto& pub_k1_sm2 = paper::kSignEcdsaK1OverSm2;
    const auto& pub_k1_p256 = paper::kSignEcdsaK1OverP256;
    const char* sig_ops[] = {"sign", "verify"};
    for (int i = 0; i < 2; ++i) {
      const Result* k1 = ops("openssl", "ECDSA-SECP256K1", sig_ops[i], kPaperSignBytes);
      rows.push_back({"ECDSA-secp256k1 / SM2", sig_ops[i], absl::StrFormat("%.2f", pub_k1_sm2[i]),
                      ratio(ops("openssl", "SM2", sig_ops[i], kPaperSignBytes), k1),
                      ratio(ops(sm, "SM2", sig_ops[i], kPaperSignBytes), k1)});
    }
    for (int i = 0; i < 2; ++i) {
      rows.push_back({"ECDSA-secp256k1 / ECDSA-P256", sig_ops[i],
                      absl::StrFormat("%.2f", pub_k1_p256[i]),
                      ratio(ops("openssl", "ECDSA-P256", sig_ops[i], kPaperSignBytes),
                            ops("openssl", "ECDSA-SECP256K1", sig_ops[i], kPaperSignBytes)),
                      "-"});
    }
    PrintTable(rows, out);
  }

  // Table 7: public-key encryption running-time ratios against OpenSSL's SM2.
  {
    out << "\nPublic-key encryption running-time ratios X / OpenSSL SM2 (RSA beyond one OAEP "
           "block: consecutive maximum-size blocks)\n";
    const auto& sizes = paper::kPkeSizes;
    const auto& pub = paper::kPkeRatio;
    std::vector<std::vector<std::string>> rows = {
        {"op", "size", "paper A", "paper RSA2048", "paper RSA3072", sm, "RSA-2048-OAEP",
         "RSA-3072-OAEP"}};
    const char* pk_ops[] = {"encrypt", "decrypt"};
    for (int o = 0; o < 2; ++o) {
      for (size_t i = 0; i < 7; ++i) {
        const Result* base = ops("openssl", "SM2", pk_ops[o], sizes[i]);
        rows.push_back({pk_ops[o], SizeName(sizes[i]), absl::StrFormat("%.3f", pub[o][0][i]),
                        absl::StrFormat("%.3f", pub[o][1][i]),
                        absl::StrFormat("%.3f", pub[o][2][i]),
                        ratio(base, ops(sm, "SM2", pk_ops[o], sizes[i])),
                        ratio(base, ops("openssl", "RSA-2048-OAEP", pk_ops[o], sizes[i])),
                        ratio(base, ops("openssl", "RSA-3072-OAEP", pk_ops[o], sizes[i]))});
      }
    }
    PrintTable(rows, out);
  }

  // Tables 8 (ECB) and 9 (CBC): the study's ratios are throughput ratios against AES
  // without EVP (table-based, no AES-NI); its "AESEVP/AES" column is EVP's speed-up over
  // that, so its OpenSSL SM4 / AES-EVP ratio is (SM4/AES) / (AESEVP/AES). Measured: SM4
  // throughput / OpenSSL EVP AES-128 throughput (< 1: SM4 is slower).
  {
    const auto& sizes = paper::kBlockSizes;
    const auto& ecb = paper::kEcbRatio;
    const auto& cbc = paper::kCbcRatio;
    for (int mode = 0; mode < 2; ++mode) {
      const std::string m = mode == 0 ? "ECB" : "CBC";
      const auto& pub = mode == 0 ? ecb : cbc;
      out << "\nSM4-" << m << " / AES-128-" << m << " throughput ratio (paper: OpenSSL SM4/AES "
          << "and AESEVP/AES; derived OpenSSL SM4/AES-EVP = their quotient)\n";
      std::vector<std::vector<std::string>> rows = {
          {"op", "size", "paper OpenSSL SM4/AES", "paper AESEVP/AES",
           "paper SM4/AES-EVP (derived)", "openssl SM4/AES-EVP", sm + "/AES-EVP"}};
      const char* block_ops[] = {"encrypt", "decrypt"};
      for (int o = 0; o < 2; ++o) {
        for (size_t i = 0; i < 9; ++i) {
          const Result* aes = ops("openssl", "AES-128-" + m, block_ops[o], sizes[i]);
          rows.push_back({block_ops[o], SizeName(sizes[i]), absl::StrFormat("%.2f", pub[o][1][i]),
                          absl::StrFormat("%.2f", pub[o][2][i]),
                          absl::StrFormat("%.4f", pub[o][1][i] / pub[o][2][i]),
                          ratio(ops("openssl", "SM4-" + m, block_ops[o], sizes[i]), aes),
                          ratio(ops(sm, "SM4-" + m, block_ops[o], sizes[i]), aes)});
        }
      }
      PrintTable(rows, out);
    }
  }
}

void PrintHeadline(const std::map<std::string, Result>& results, const Dispatch& dispatch,
                   std::ostream& out) {
  const Table t = Index(results);
  std::vector<std::vector<std::string>> table = {
      {"algorithm", "operation", "size", "unit", "smcrypt", "back end", "OpenSSL same",
       "ratio", "OpenSSL counterpart", "value", "ratio"}};
  size_t reps = 0;
  for (const HeadlineCase& r : HeadlineCases()) {
    std::string impl;
    const Result* mine = Dispatched(t, dispatch, r.alg, r.op, r.bytes, &impl);
    if (mine == nullptr) continue;
    reps = std::max(reps, mine->items_reps.size());
    // SM2 (and the counterparts RSA/ECDSA) in operations per second, the rest in MB/s.
    const bool per_op = std::string(r.alg) == "SM2";
    const Result* same = Find(t, r.alg, r.op, r.bytes, "openssl");
    const Result* cp = Find(t, r.counterpart, r.counterpart_op, r.bytes, "openssl");
    table.push_back({r.alg, OpName(r.op), SizeName(r.bytes), per_op ? "ops/s" : "MB/s",
                     FmtSpread(mine, per_op), ShortImpl(impl), FmtSpread(same, per_op),
                     RatioText(mine, same, per_op), r.counterpart, FmtSpread(cp, per_op),
                     RatioText(mine, cp, per_op)});
  }
  const std::string openssl = OpensslPeer();
  out << "Headline: the back end dispatch chose on this CPU (what a caller of smcrypt gets) "
         "against OpenSSL "
      << (openssl.size() > 8 ? openssl.substr(8) : openssl)
      << " on the same algorithm and on its international counterpart; ratio > 1: smcrypt "
         "is faster. Medians of "
      << reps
      << " randomly interleaved repetitions, ± their coefficient of variation; ratio = ratio "
         "of medians (min–max of the per-repetition ratios). SM3 batch of 16: 16 messages of "
         "the size in one Sm3Batch call; SM4-CBC encrypt, 16 keys: 16 messages with their own "
         "keys in one multi-buffer call; MB/s over all of them.\n\n";
  PrintTable(table, out);
}

}  // namespace smcrypt::bench
