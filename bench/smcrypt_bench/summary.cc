// summary.cc — per-family tables and the study's ratio tables from one run's results.
#include "bench/smcrypt_bench/summary.h"

#include <algorithm>
#include <cstdlib>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/paper_figures.h"
#include "bench/smcrypt_bench/bench_util.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

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
       {{"SM4-ECB", {"AES-128-ECB"}}, {"SM4-CBC", {"AES-128-CBC"}}, {"SM4-CTR", {"AES-128-CTR"}}}},
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

double Value(const Result& r, bool ops) {
  return ops ? r.items_per_second : r.bytes_per_second / 1e6;
}

std::string Fmt(double v) {
  if (v >= 100) return absl::StrFormat("%.0f", v);
  if (v >= 10) return absl::StrFormat("%.1f", v);
  return absl::StrFormat("%.2f", v);
}

std::string SizeName(size_t b) {
  if (b >= (size_t{1} << 30) && b % (size_t{1} << 30) == 0) return absl::StrCat(b >> 30, " GiB");
  if (b >= (size_t{1} << 20) && b % (size_t{1} << 20) == 0) return absl::StrCat(b >> 20, " MiB");
  if (b >= 1024 && b % 1024 == 0) return absl::StrCat(b >> 10, " KiB");
  return absl::StrCat(b, " B");
}

void PrintRow(const std::vector<std::string>& cells, const std::vector<size_t>& widths,
              std::ostream& out) {
  std::string line;
  for (size_t i = 0; i < cells.size(); ++i) {
    line += i == 0 ? absl::StrFormat("%-*s", static_cast<int>(widths[i]), cells[i])
                   : absl::StrFormat("  %*s", static_cast<int>(widths[i]), cells[i]);
  }
  out << line << "\n";
}

void PrintTable(const std::vector<std::vector<std::string>>& rows, std::ostream& out) {
  std::vector<size_t> widths;
  for (const auto& r : rows) {
    widths.resize(std::max(widths.size(), r.size()), 0);
    for (size_t i = 0; i < r.size(); ++i) widths[i] = std::max(widths[i], r[i].size());
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

// PrintSm2Batches compares the SM2 batch cases with the single operations of the same run
// (per signature, on the fastest smcrypt back end that measured the single case) and the SM2
// encryption KDF pair (lane-parallel vs serial SM3 KDF).
void PrintSm2Batches(const Table& t, const std::vector<std::string>& smcrypt_impls,
                     std::ostream& out) {
  std::vector<std::vector<std::string>> rows = {
      {"SM2", "batch", "batch ops/s", "single", "single ops/s", "batch/single"}};
  for (const std::string op : {"sign", "verify", "verify_uncached"}) {
    auto b = t.find({"SM2", op + "_batch"});
    if (b == t.end()) continue;
    for (const auto& [items, by_impl] : b->second) {
      for (const auto& [impl, r] : by_impl) {
        // The fastest single-operation back end of this run (what a caller gets without
        // batching).
        const Result* single = nullptr;
        std::string single_impl;
        for (const std::string& s : smcrypt_impls) {
          const Result* x = Find(t, "SM2", op, kSignMessageSize, s);
          if (x != nullptr && (single == nullptr || x->items_per_second > single->items_per_second)) {
            single = x;
            single_impl = s;
          }
        }
        rows.push_back({op, absl::StrCat(items, " per call, ", impl), Fmt(r.items_per_second),
                        single ? single_impl : "-", single ? Fmt(single->items_per_second) : "-",
                        single && single->items_per_second > 0
                            ? absl::StrFormat("%.2f", r.items_per_second / single->items_per_second)
                            : "-"});
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
                        "64 per call, " + impl, Fmt(r.items_per_second), "one per call",
                        Fmt(s->items_per_second),
                        absl::StrFormat("%.2f", r.items_per_second / s->items_per_second)});
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
                        Fmt(r.items_per_second), "KDF serial", Fmt(s->items_per_second),
                        absl::StrFormat("%.2f", r.items_per_second / s->items_per_second)});
      }
    }
  }
  if (rows.size() == 1) return;
  out << "\n== SM2 and hybrid batches, and the lane-parallel KDF, against the single path "
         "(ops/s) ==\n\n";
  PrintTable(rows, out);
}

// PrintHybridVsPublicKey is the blockchain study's "ECC" vs "ECC+AES" comparison: the
// whole payload under SM2 public-key encryption (C1C3C2) against HPKE with the SM suite,
// per size, with the P-256 suite and OpenSSL's SM2 beside them.
void PrintHybridVsPublicKey(const Table& t, const std::vector<std::string>& smcrypt_impls,
                            std::ostream& out) {
  const std::string hpke_sm = "HPKE-SM2-SM3-SM4GCM", hpke_p256 = "HPKE-P256-SHA256-AES128GCM";
  for (const std::string op : {"encrypt", "decrypt"}) {
    auto sm_result = [&](const std::string& alg, size_t bytes) -> const Result* {
      for (const std::string& s : smcrypt_impls) {
        if (const Result* r = Find(t, alg, op, bytes, s)) return r;
      }
      return nullptr;
    };
    std::vector<std::vector<std::string>> rows = {
        {"size", "smcrypt SM2", "smcrypt HPKE-SM", "HPKE-SM/SM2", "openssl SM2",
         "openssl HPKE-P256", "HPKE-SM/HPKE-P256"}};
    for (size_t bytes : HybridSizes()) {
      const Result* sm2 = sm_result("SM2", bytes);
      const Result* hyb = sm_result(hpke_sm, bytes);
      const Result* o_sm2 = Find(t, "SM2", op, bytes, "openssl");
      const Result* o_p256 = Find(t, hpke_p256, op, bytes, "openssl");
      if (sm2 == nullptr && hyb == nullptr) continue;
      auto mbs = [](const Result* r) { return r ? Fmt(Value(*r, false)) : std::string("-"); };
      auto ratio = [](const Result* a, const Result* b) -> std::string {
        if (a == nullptr || b == nullptr || b->bytes_per_second <= 0) return "-";
        return absl::StrFormat("%.2f", a->bytes_per_second / b->bytes_per_second);
      };
      rows.push_back({SizeName(bytes), mbs(sm2), mbs(hyb), ratio(hyb, sm2), mbs(o_sm2),
                      mbs(o_p256), ratio(hyb, o_p256)});
    }
    if (rows.size() == 1) continue;
    out << "\n== \"ECC\" vs \"ECC+AES\": public-key vs hybrid encryption of the whole payload, "
        << op << " (MB/s) ==\nSM2 = SM2 public-key encryption (C1C3C2); HPKE-SM = " << hpke_sm
        << "; HPKE-P256 = " << hpke_p256 << "\n";
    PrintTable(rows, out);
  }
}

}  // namespace

void SummaryReporter::ReportRuns(const std::vector<Run>& runs) {
  ConsoleReporter::ReportRuns(runs);
  for (const Run& run : runs) {
    if (run.error_occurred) continue;
    const bool is_median =
        run.run_type == Run::RT_Aggregate && run.aggregate_name == "median";
    if (run.run_type == Run::RT_Aggregate && !is_median) continue;
    const std::string name = run.run_name.function_name;
    // A median replaces single repetitions; a later repetition does not replace a median.
    if (!is_median && from_median_[name]) continue;
    Result r;
    auto b = run.counters.find("bytes_per_second");
    if (b != run.counters.end()) r.bytes_per_second = b->second.value;
    auto i = run.counters.find("items_per_second");
    if (i != run.counters.end()) r.items_per_second = i->second.value;
    results_[name] = r;
    from_median_[name] = is_median;
  }
}

void PrintSummary(const std::map<std::string, Result>& results,
                  const std::vector<std::string>& smcrypt_impls, std::ostream& out) {
  const Table t = Index(results);
  const std::vector<std::string> peers = {"openssl", "libgcrypt", "botan"};
  out << "\nsmcrypt-bench summary: medians of this run; ratio = smcrypt throughput / other "
         "throughput (> 1: smcrypt is faster).\n";
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
        out << "\n" << alg << " " << op << "\n";
        std::vector<std::vector<std::string>> rows;
        std::vector<std::string> header = {"size"};
        for (const auto& s : impls) header.push_back(s);
        for (const auto& p : peer_cols) header.push_back(p);
        for (const auto& c : cps) header.push_back("openssl " + c);
        for (const auto& s : impls) {
          if (std::find(peer_cols.begin(), peer_cols.end(), "openssl") != peer_cols.end()) {
            header.push_back(ShortImpl(s) + "/openssl");
          }
          for (const auto& c : cps) header.push_back(ShortImpl(s) + "/" + c);
        }
        rows.push_back(header);
        for (const auto& [bytes, m] : by_size) {
          // Batch cases carry the batch size where the others carry bytes.
          const bool batch = op.size() > 6 && op.compare(op.size() - 6, 6, "_batch") == 0;
          std::vector<std::string> row = {batch ? absl::StrCat(bytes, " sigs") : SizeName(bytes)};
          auto cell = [&](const std::string& impl, const std::string& a) -> const Result* {
            return Find(t, a, op, bytes, impl);
          };
          for (const auto& s : impls) {
            const Result* r = cell(s, alg);
            row.push_back(r ? Fmt(Value(*r, f.ops)) : "-");
          }
          for (const auto& p : peer_cols) {
            const Result* r = cell(p, alg);
            row.push_back(r ? Fmt(Value(*r, f.ops)) : "-");
          }
          for (const auto& c : cps) {
            const Result* r = cell("openssl", c);
            row.push_back(r ? Fmt(Value(*r, f.ops)) : "-");
          }
          for (const auto& s : impls) {
            const Result* mine = cell(s, alg);
            auto ratio = [&](const Result* other) -> std::string {
              if (mine == nullptr || other == nullptr) return "-";
              const double d = Value(*other, f.ops);
              return d > 0 ? absl::StrFormat("%.2f", Value(*mine, f.ops) / d) : "-";
            };
            if (std::find(peer_cols.begin(), peer_cols.end(), "openssl") != peer_cols.end()) {
              row.push_back(ratio(cell("openssl", alg)));
            }
            for (const auto& c : cps) row.push_back(ratio(cell("openssl", c)));
          }
          rows.push_back(row);
        }
        PrintTable(rows, out);
      }
    }
  }
  PrintHybridVsPublicKey(t, smcrypt_impls, out);
  PrintSm2Batches(t, smcrypt_impls, out);
}

namespace {

// Throughput of `impl`'s `alg`/`op` at `bytes` (ops/s), or 0 when not measured.
// The implementation "smcrypt" means the first of `SmImpls()` (best back end first) that
// measured this case.
std::vector<std::string>& SmImpls() {
  static std::vector<std::string> impls;
  return impls;
}

double Ops(const Table& t, const std::string& impl, const std::string& alg, const std::string& op,
           size_t bytes) {
  if (impl == "smcrypt") {
    for (const std::string& s : SmImpls()) {
      const double v = Ops(t, s, alg, op, bytes);
      if (v > 0) return v;
    }
    return 0;
  }
  const Result* r = Find(t, alg, op, bytes, impl);
  return r == nullptr ? 0 : r->items_per_second;
}

std::string Ratio(double num, double den) {
  return num > 0 && den > 0 ? absl::StrFormat("%.3f", num / den) : "-";
}

}  // namespace

void PrintPaperView(const std::map<std::string, Result>& results,
                    const std::vector<std::string>& smcrypt_impls, std::ostream& out) {
  const Table t = Index(results);
  SmImpls() = smcrypt_impls;
  const std::string sm = "smcrypt";
  out << "\nPaper view: Hu, Yang, Xiong, Wu, \"SM Algorithm Analysis and Software Performance "
         "Research\", Netinfo Security 21(10):8-16, 2021. Published columns are the study's "
         "(its vendor \"A\" and OpenSSL 1.1-era figures on its machine); measured columns are "
         "this run's. \"smcrypt\" is the best smcrypt back end that ran each case.\n";

  // Table 2: SM3/SHA-256 running-time ratio (> 1: SM3 is slower).
  {
    out << "\nSM3 / SHA-256 running-time ratio\n";
    const auto& sizes = paper::kHashSizes;
    const auto& pub_a = paper::kSm3OverSha256VendorA;
    const auto& pub_ossl = paper::kSm3OverSha256OpenSsl;
    std::vector<std::vector<std::string>> rows = {
        {"size", "paper A", "paper OpenSSL", "openssl", sm + "/openssl SHA-256"}};
    for (size_t i = 0; i < 6; ++i) {
      const double sha = Ops(t, "openssl", "SHA-256", "hash", sizes[i]);
      rows.push_back({SizeName(sizes[i]), absl::StrFormat("%.4f", pub_a[i]),
                      absl::StrFormat("%.4f", pub_ossl[i]),
                      Ratio(sha, Ops(t, "openssl", "SM3", "hash", sizes[i])),
                      Ratio(sha, Ops(t, sm, "SM3", "hash", sizes[i]))});
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
    const char* ops[] = {"sign", "verify"};
    for (int i = 0; i < 2; ++i) {
      const double k1 = Ops(t, "openssl", "ECDSA-SECP256K1", ops[i], kPaperSignBytes);
      rows.push_back({"ECDSA-secp256k1 / SM2", ops[i], absl::StrFormat("%.2f", pub_k1_sm2[i]),
                      Ratio(Ops(t, "openssl", "SM2", ops[i], kPaperSignBytes), k1),
                      Ratio(Ops(t, sm, "SM2", ops[i], kPaperSignBytes), k1)});
    }
    for (int i = 0; i < 2; ++i) {
      rows.push_back({"ECDSA-secp256k1 / ECDSA-P256", ops[i],
                      absl::StrFormat("%.2f", pub_k1_p256[i]),
                      Ratio(Ops(t, "openssl", "ECDSA-P256", ops[i], kPaperSignBytes),
                            Ops(t, "openssl", "ECDSA-SECP256K1", ops[i], kPaperSignBytes)),
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
    const char* ops[] = {"encrypt", "decrypt"};
    for (int o = 0; o < 2; ++o) {
      for (size_t i = 0; i < 7; ++i) {
        const double base = Ops(t, "openssl", "SM2", ops[o], sizes[i]);
        rows.push_back({ops[o], SizeName(sizes[i]), absl::StrFormat("%.3f", pub[o][0][i]),
                        absl::StrFormat("%.3f", pub[o][1][i]),
                        absl::StrFormat("%.3f", pub[o][2][i]),
                        Ratio(base, Ops(t, sm, "SM2", ops[o], sizes[i])),
                        Ratio(base, Ops(t, "openssl", "RSA-2048-OAEP", ops[o], sizes[i])),
                        Ratio(base, Ops(t, "openssl", "RSA-3072-OAEP", ops[o], sizes[i]))});
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
      const char* ops[] = {"encrypt", "decrypt"};
      for (int o = 0; o < 2; ++o) {
        for (size_t i = 0; i < 9; ++i) {
          const double aes = Ops(t, "openssl", "AES-128-" + m, ops[o], sizes[i]);
          rows.push_back({ops[o], SizeName(sizes[i]), absl::StrFormat("%.2f", pub[o][1][i]),
                          absl::StrFormat("%.2f", pub[o][2][i]),
                          absl::StrFormat("%.4f", pub[o][1][i] / pub[o][2][i]),
                          Ratio(Ops(t, "openssl", "SM4-" + m, ops[o], sizes[i]), aes),
                          Ratio(Ops(t, sm, "SM4-" + m, ops[o], sizes[i]), aes)});
        }
      }
      PrintTable(rows, out);
    }
  }
}

void PrintHeadline(const std::map<std::string, Result>& results,
                   const std::vector<std::string>& smcrypt_impls, std::ostream& out) {
  const Table t = Index(results);
  struct Row {
    const char* alg;
    const char* op;
    size_t bytes;
    const char* counterpart;  // international counterpart, measured with OpenSSL
    const char* counterpart_op;
  };
  const Row rows[] = {
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
  std::vector<std::vector<std::string>> table = {
      {"algorithm", "operation", "size", "unit", "smcrypt", "back end", "OpenSSL same",
       "ratio", "OpenSSL counterpart", "value", "ratio"}};
  for (const Row& r : rows) {
    // The fastest smcrypt back end that ran this case.
    const Result* best = nullptr;
    std::string best_impl;
    const bool per_op = std::string(r.alg) == "SM2";
    for (const std::string& s : smcrypt_impls) {
      const Result* x = Find(t, r.alg, r.op, r.bytes, s);
      if (x != nullptr && (best == nullptr || x->items_per_second > best->items_per_second)) {
        best = x;
        best_impl = ShortImpl(s);
      }
    }
    if (best == nullptr) continue;
    // SM2 (and the counterparts RSA/ECDSA) in operations per second, the rest in MB/s.
    auto value = [per_op](const Result* x) { return per_op ? x->items_per_second
                                                           : x->bytes_per_second / 1e6; };
    const Result* same = Find(t, r.alg, r.op, r.bytes, "openssl");
    const Result* cp = Find(t, r.counterpart, r.counterpart_op, r.bytes, "openssl");
    auto ratio = [&](const Result* other) -> std::string {
      if (other == nullptr || value(other) <= 0) return "-";
      return absl::StrFormat("%.2f", value(best) / value(other));
    };
    std::string op = r.op;
    if (op == "batch16") op = "batch of 16";
    if (op == "encrypt16") op = "encrypt, 16 keys";
    if (op == "encrypt_batch64") op = "encrypt, 64 per call";
    table.push_back({r.alg, op, SizeName(r.bytes), per_op ? "ops/s" : "MB/s",
                     Fmt(value(best)), best_impl, same ? Fmt(value(same)) : "-", ratio(same),
                     r.counterpart, cp ? Fmt(value(cp)) : "-", ratio(cp)});
  }
  out << "Headline: the fastest smcrypt back end against OpenSSL " << OpensslPeer().substr(8)
      << " on the same algorithm and on its international counterpart; ratio > 1: smcrypt "
         "is faster. SM3 batch of 16: 16 messages of the size in one Sm3Batch call; SM4-CBC "
         "encrypt, 16 keys: 16 messages with their own keys in one multi-buffer call; MB/s over "
         "all of them.\n\n";
  PrintTable(table, out);
}

}  // namespace smcrypt::bench
