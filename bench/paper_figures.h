// paper_figures.h — the published figures smcrypt's benchmarks are compared with, in one
// place: smcrypt-bench's paper view (in-process) and smcrypt-load's `paper`, `load` and
// `concurrency` scenarios (through smcryptd) print them beside their own measurements.
//
// Sources (the texts are kept with the project's research notes):
//  [Hu2021]  Hu, Yang, Xiong, Wu, "SM Algorithm Analysis and Software Performance
//            Research", Netinfo Security 21(10):8-16, 2021, doi:10.3969/j.issn.1671-1122.
//            2021.10.002 — running-time and throughput ratios (its vendor "A" library and
//            OpenSSL 1.1-era figures on its machine).
//  [Li-ECC]  Li, Liu, Yang, "Performance analysis of ECC and its improved encryption
//            algorithm" (China Mobile CMBaaS blockchain platform): Java ECC vs ECC+AES on an
//            i7-9750H — load and concurrency figures.
//  [SM4-GCM] "SM4 vs AES-GCM performance benchmark" (OpenSSL 3.0.2, Ubuntu 22.04): 1 GiB
//            encryption throughput, software-only and with hardware acceleration.
//  [SM3-SHA] "SM3 vs SHA-256 performance comparison" (Xeon Gold 6338, GCC 11.3 -O3):
//            throughput at 1 KiB, 1 MiB and 1 GiB.
#ifndef SMCRYPT_BENCH_PAPER_FIGURES_H_
#define SMCRYPT_BENCH_PAPER_FIGURES_H_

#include <cstddef>

namespace smcrypt::paper {

// ---- [Hu2021] table 2: SM3 / SHA-256 running-time ratio (> 1: SM3 is slower) ----------
inline constexpr size_t kHashSizes[6] = {8, 64, 256, 1024, 524288, 1048576};
inline constexpr double kSm3OverSha256VendorA[6] = {1.3819, 1.2329, 1.1652,
                                                     1.1295, 1.1181, 1.1160};
inline constexpr double kSm3OverSha256OpenSsl[6] = {1.8048, 1.8392, 1.9581,
                                                     2.0152, 2.0292, 2.0546};

// ---- [Hu2021] table 5: signature running-time ratios, index 0 sign, 1 verify ----------
inline constexpr double kSignEcdsaK1OverSm2[2] = {1.11, 1.12};
inline constexpr double kSignEcdsaK1OverP256[2] = {16.60, 4.16};

// ---- [Hu2021] table 7: public-key encryption running time X / OpenSSL SM2 -------------
// kPkeRatio[op][x][size]: op 0 encrypt, 1 decrypt; x 0 vendor A's SM2, 1 RSA-2048,
// 2 RSA-3072 (RSA beyond one OAEP block: consecutive maximum-size blocks).
inline constexpr size_t kPkeSizes[7] = {16, 64, 256, 1024, 4096, 16384, 32768};
inline constexpr double kPkeRatio[2][3][7] = {
    {{0.147787644, 0.148209251, 0.151985583, 0.162721267, 0.201123432, 0.298521417,
      0.364572911},
     {0.040161646, 0.039978619, 0.079726359, 0.193082678, 0.688962323, 1.877450216,
      2.688391462},
     {0.080578194, 0.080326983, 0.080332399, 0.233398426, 0.837251662, 2.34507407,
      3.371995372}},
    {{0.228408613, 0.226845092, 0.234965591, 0.250163081, 0.301611021, 0.398097074,
      0.446773723},
     {2.29651208, 2.263777384, 4.537950334, 10.6395389, 35.33215849, 78.22104433,
      100.6119596},
     {7.175291258, 7.07422817, 7.082142906, 19.95441131, 65.68612578, 151.4175574,
      196.0483998}}};

// ---- [Hu2021] tables 8 (ECB) and 9 (CBC): throughput ratios against table-based AES ---
// k{Ecb,Cbc}Ratio[op][col][size]: op 0 encrypt, 1 decrypt; col 0 vendor A SM4/AES,
// 1 OpenSSL SM4/AES, 2 OpenSSL AES-EVP/AES (EVP's speed-up). OpenSSL SM4 / AES-EVP is
// col 1 / col 2.
inline constexpr size_t kBlockSizes[9] = {32, 128, 512, 1024, 4096, 16384, 65536, 262144,
                                          1048576};
inline constexpr double kEcbRatio[2][3][9] = {
    {{0.99, 2.9, 3.34, 3.35, 3.43, 3.54, 3.5, 3.53, 3.52},
     {0.81, 0.83, 0.83, 0.84, 0.81, 0.82, 0.82, 0.82, 0.82},
     {10.69, 25.08, 31.96, 33.54, 34, 35.1, 35.19, 35.4, 34.48}},
    {{1.31, 3.92, 4.47, 4.47, 4.57, 4.71, 4.73, 4.74, 4.71},
     {1.07, 1.12, 1.12, 1.12, 1.10, 1.11, 1.08, 1.13, 1.12},
     {11.13, 29.96, 40.97, 43.08, 43.54, 45.04, 45.44, 45.7, 45.48}}};
inline constexpr double kCbcRatio[2][3][9] = {
    {{1.52, 1.18, 1.09, 1.07, 1.05, 1.05, 1.05, 1.04, 1.05},
     {1.19, 0.89, 0.82, 0.80, 0.80, 0.80, 0.81, 0.80, 0.80},
     {8.53, 6.55, 6.02, 5.92, 5.93, 5.92, 5.95, 5.84, 5.95}},
    {{1.23, 3.67, 4.36, 4.39, 4.56, 4.61, 4.63, 4.63, 4.66},
     {1.09, 1.10, 1.11, 1.11, 1.11, 1.11, 1.11, 1.10, 1.11},
     {10.75, 28.65, 44.58, 48.78, 52.46, 53.39, 53.93, 54, 54.05}}};

// ---- [SM4-GCM]: 1 GiB encryption throughput, MB/s (no 1 KiB / 1 MiB figures given) ---
struct GcmFigure {
  const char* algorithm;  // docs/design.md name
  double software_mb_s;   // pure software implementation
  double hardware_mb_s;   // with AES-NI (the SM4 figure is the study's "hardware" column)
};
inline constexpr GcmFigure kGcm1GiB[3] = {
    {"SM4-ECB", 220, 980}, {"AES-128-GCM", 280, 4200}, {"AES-256-GCM", 210, 3800}};

// ---- [SM3-SHA]: SM3 and SHA-256 throughput -----------------------------------------
// 1 KiB in operations per second, 1 MiB and 1 GiB in GB/s (10^9 bytes/s as published).
inline constexpr double kSm3Ops1KiB = 12500, kSha256Ops1KiB = 14200;
inline constexpr double kSm3GBs1MiB = 1.2, kSha256GBs1MiB = 1.35;
inline constexpr double kSm3GBs1GiB = 1.15, kSha256GBs1GiB = 1.32;

// ---- [Li-ECC]: ECC ("ECC") vs ECC joined with AES ("ECC+AES"), 512-byte payloads ------
// Load: one caller for 5 minutes; the daily capacity is rate x 8 h x 0.2 / 0.8 (80% of
// the business in 20% of the time). Concurrency: the throughput peak, at 20,000
// concurrent requests.
inline constexpr double kLoadSeconds = 300;
inline constexpr double kLoadTotalEcc = 98315, kLoadTotalEccAes = 107630;
inline constexpr double kDailyCapacityEcc = 2.36e6, kDailyCapacityEccAes = 2.58e6;
inline constexpr double kPeakRateEcc = 363.5, kPeakRateEccAes = 368.2;
inline constexpr int kPeakConcurrency = 20000;

// DailyCapacity is [Li-ECC]'s estimate of a day's business at `ops_per_second`: 8 hours,
// of which the busiest 20% carry 80% of the load.
inline constexpr double DailyCapacity(double ops_per_second) {
  return ops_per_second * 8 * 3600 * 0.2 / 0.8;
}

}  // namespace smcrypt::paper

#endif  // SMCRYPT_BENCH_PAPER_FIGURES_H_
