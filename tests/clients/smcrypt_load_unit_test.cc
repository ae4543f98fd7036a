// Unit tests of smcrypt-load's pieces (label unit): the log-linear histogram's layout and
// relative-error bound, flag value parsing, the Prometheus text reader and the SVG writer.
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "clients/smcrypt-load/histogram.h"
#include "clients/smcrypt-load/options.h"
#include "clients/smcrypt-load/server_metrics.h"
#include "clients/smcrypt-load/svg_chart.h"
#include "clients/smcrypt-load/workload.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace smcrypt::load {
namespace {

TEST(HistogramTest, SmallValuesAreExact) {
  Histogram h;
  for (uint64_t v = 0; v < 256; ++v) h.Record(v);
  EXPECT_EQ(h.count(), 256u);
  EXPECT_EQ(h.min(), 0u);
  EXPECT_EQ(h.max(), 255u);
  EXPECT_DOUBLE_EQ(h.Mean(), 127.5);
  EXPECT_DOUBLE_EQ(h.ValueAtPercentile(50), 127);  // rank 128
  EXPECT_DOUBLE_EQ(h.ValueAtPercentile(100), 255);
  EXPECT_DOUBLE_EQ(h.ValueAtPercentile(0), 0);
}

TEST(HistogramTest, BucketsTileTheRangeWithBoundedWidth) {
  // Every bucket starts where the previous one ends, and width / lower bound <= 1/128.
  uint64_t next = 0;
  for (size_t i = 0; i < Histogram::NumBuckets(); ++i) {
    ASSERT_EQ(Histogram::BucketLowerBound(i), next) << "bucket " << i;
    const uint64_t w = Histogram::BucketWidth(i);
    if (i >= Histogram::kSubBuckets) {
      ASSERT_LE(static_cast<double>(w) / Histogram::BucketLowerBound(i), 1.0 / 128) << i;
    }
    ASSERT_EQ(Histogram::BucketIndex(next), i);
    ASSERT_EQ(Histogram::BucketIndex(next + w - 1), i);
    next += w;
    if (next == 0) break;  // wrapped: the last bucket ends at 2^64
  }
  EXPECT_EQ(next, 0u) << "buckets must cover the whole uint64_t range";
  EXPECT_EQ(Histogram::BucketIndex(UINT64_MAX), Histogram::NumBuckets() - 1);
}

TEST(HistogramTest, PercentilesWithinRelativeErrorOfExact) {
  const uint64_t seed = 20240601;
  std::mt19937_64 rng(seed);
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::lognormal_distribution<double> dist(13.0, 2.0);  // ~0.4 ms median, wide tail
  std::vector<uint64_t> values;
  Histogram h;
  for (int i = 0; i < 100000; ++i) {
    const uint64_t v = static_cast<uint64_t>(dist(rng));
    values.push_back(v);
    h.Record(v);
  }
  std::sort(values.begin(), values.end());
  for (double p : {1.0, 10.0, 50.0, 90.0, 99.0, 99.9, 99.99, 100.0}) {
    const size_t rank = static_cast<size_t>(std::ceil(p / 100 * values.size()));
    const double exact = static_cast<double>(values[std::max<size_t>(rank, 1) - 1]);
    const double got = h.ValueAtPercentile(p);
    EXPECT_LE(std::fabs(got - exact), exact * Histogram::kMaxRelativeError + 0.5)
        << "p" << p << " exact " << exact << " got " << got;
  }
  EXPECT_EQ(h.max(), values.back());
  EXPECT_EQ(h.min(), values.front());
  long double sum = 0;
  for (uint64_t v : values) sum += v;
  EXPECT_NEAR(h.Mean(), static_cast<double>(sum / values.size()), 1e-6 * h.Mean());
}

TEST(HistogramTest, MergeEqualsRecordingEverything) {
  Histogram a, b, all;
  for (uint64_t v = 1; v < 5000000; v = v * 3 + 1) {
    ((v & 1) ? a : b).Record(v);
    all.Record(v);
  }
  a.Merge(b);
  EXPECT_EQ(a.count(), all.count());
  EXPECT_EQ(a.max(), all.max());
  EXPECT_EQ(a.min(), all.min());
  for (double p : {25.0, 50.0, 75.0, 99.0}) {
    EXPECT_EQ(a.ValueAtPercentile(p), all.ValueAtPercentile(p));
  }
}

TEST(HistogramTest, EmptyIsZero) {
  Histogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.ValueAtPercentile(99), 0);
  EXPECT_EQ(h.Mean(), 0);
  EXPECT_EQ(h.min(), 0u);
}

TEST(OptionsTest, Sizes) {
  EXPECT_EQ(*ParseSize("512"), 512u);
  EXPECT_EQ(*ParseSize("1KiB"), 1024u);
  EXPECT_EQ(*ParseSize("30k"), 30u * 1024);
  EXPECT_EQ(*ParseSize("1MiB"), 1u << 20);
  EXPECT_EQ(*ParseSize("1GiB"), size_t{1} << 30);
  EXPECT_EQ(*ParseSize("16B"), 16u);
  EXPECT_FALSE(ParseSize("abc").ok());
  EXPECT_FALSE(ParseSize("-1").ok());
  EXPECT_FALSE(ParseSize("").ok());
}

TEST(OptionsTest, DurationsAndLists) {
  EXPECT_EQ(*ParseDurationFlag("300"), absl::Seconds(300));
  EXPECT_EQ(*ParseDurationFlag("500ms"), absl::Milliseconds(500));
  EXPECT_FALSE(ParseDurationFlag("0").ok());
  EXPECT_FALSE(ParseDurationFlag("soon").ok());
  EXPECT_EQ(*ParseIntList("1,10, 100,20_000"), (std::vector<int>{1, 10, 100, 20000}));
  EXPECT_FALSE(ParseIntList("1,0").ok());
  EXPECT_FALSE(ParseIntList("").ok());
  EXPECT_EQ(*ParseIntList("1,20000", kMaxInFlight), (std::vector<int>{1, 20000}));
  EXPECT_FALSE(ParseIntList("1,100001", kMaxInFlight).ok());
}

TEST(OptionsTest, CountsWithinBounds) {
  EXPECT_GE(kMaxInFlight, 20000);  // the concurrency scenario's last step
  EXPECT_EQ(*ParseCount("concurrency", "20000", kMaxInFlight), 20000);
  EXPECT_EQ(*ParseCount("concurrency", "100000", kMaxInFlight), 100000);
  EXPECT_EQ(ParseCount("concurrency", "100001", kMaxInFlight).status().message(),
            "--concurrency 100001: expected an integer from 1 to 100000");
  EXPECT_FALSE(ParseCount("connections", "0", kMaxConnections).ok());
  EXPECT_FALSE(ParseCount("connections", "-1", kMaxConnections).ok());
  EXPECT_FALSE(ParseCount("batch", "99999999999999999999", kMaxBatchItems).ok());
  EXPECT_FALSE(ParseCount("batch", "1x", kMaxBatchItems).ok());
}

TEST(OptionsTest, MetadataValuesArePrintableAsciiUnlessBinary) {
  EXPECT_OK(CheckMetadataValue("authorization", "Bearer a.b~c !\"{}"));
  EXPECT_OK(CheckMetadataValue("x-a", ""));
  for (const std::string& v : {std::string("a\nb"), std::string("a\rb"), std::string("a\tb"),
                               std::string("a\x01b"), std::string("a\x7f"),
                               std::string("a\0b", 3), std::string("caf\xc3\xa9")}) {
    absl::Status st = CheckMetadataValue("x-a", v);
    EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << absl::CEscape(v);
    EXPECT_TRUE(absl::StartsWith(st.message(), "--metadata x-a: byte 0x")) << st.message();
  }
  EXPECT_OK(CheckMetadataValue("x-a-bin", std::string("\0\n\xff", 3)));
}

TEST(OptionsTest, TargetAddresses) {
  EXPECT_EQ(TargetAddresses("127.0.0.1:1"), (std::vector<std::string>{"127.0.0.1:1"}));
  EXPECT_EQ(TargetAddresses("a:1,b:2"), (std::vector<std::string>{"a:1", "b:2"}));
  EXPECT_EQ(TargetAddresses("dns:///svc:50051"), (std::vector<std::string>{"dns:///svc:50051"}));
  EXPECT_EQ(TargetAddresses("ipv4:127.0.0.1:1,127.0.0.1:2"),
            (std::vector<std::string>{"ipv4:127.0.0.1:1,127.0.0.1:2"}));
}

TEST(ServerMetricsTest, ParsesSmcryptdExposition) {
  const std::string text =
      "# HELP grpc_server_handled_total Total number of RPCs completed\n"
      "# TYPE grpc_server_handled_total counter\n"
      "grpc_server_handled_total{grpc_code=\"OK\",grpc_method=\"Hash\",grpc_service=\"smcrypt.v1."
      "CryptoService\",grpc_type=\"unary\"} 12\n"
      "grpc_server_handled_total{grpc_code=\"OK\",grpc_method=\"Sign\",grpc_service=\"smcrypt.v1."
      "CryptoService\",grpc_type=\"unary\"} 3\n"
      "grpc_server_handled_total{grpc_code=\"RESOURCE_EXHAUSTED\",grpc_method=\"Hash\","
      "grpc_service=\"smcrypt.v1.CryptoService\",grpc_type=\"unary\"} 2\n"
      "smcrypt_inflight_requests 7\n"
      "process_cpu_seconds_total 1.5\n"
      "process_resident_memory_bytes 2.5e+07\n";
  ASSERT_OK_AND_ASSIGN(ServerSample s, ParseServerSample(text));
  EXPECT_EQ(s.handled_total, 17);
  EXPECT_EQ(s.handled_by_code["OK"], 15);
  EXPECT_EQ(s.handled_by_code["RESOURCE_EXHAUSTED"], 2);
  EXPECT_EQ(s.inflight, 7);
  EXPECT_EQ(s.cpu_seconds, 1.5);
  EXPECT_EQ(s.resident_bytes, 2.5e7);
  EXPECT_FALSE(ParseServerSample("# nothing here\nfoo 1\n").ok());
}

TEST(ServerMetricsTest, BadUrls) {
  EXPECT_EQ(HttpGet("https://x:1/metrics", absl::Seconds(1)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(HttpGet("http://127.0.0.1/metrics", absl::Seconds(1)).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// The decrypting streams' plaintext check: `chunk` repeated up to `total`, in any pieces.
TEST(PayloadCheckTest, AcceptsExactlyTheRepeatedChunk) {
  const std::string chunk = "0123456789";
  PayloadCheck whole(chunk, 25);
  whole.Add("0123456789012345678901234");
  EXPECT_THAT(whole.Finish(), testing::IsOk());
  PayloadCheck pieces(chunk, 25);
  for (std::string_view p : {"0123", "4567890", "", "12345678901234"}) pieces.Add(p);
  EXPECT_THAT(pieces.Finish(), testing::IsOk());
  PayloadCheck empty(chunk, 0);
  EXPECT_THAT(empty.Finish(), testing::IsOk());
}

TEST(PayloadCheckTest, ADifferentByteOrLengthIsDataLoss) {
  const std::string chunk = "0123456789";
  PayloadCheck flipped(chunk, 25);
  flipped.Add("01234567890123");
  flipped.Add("X5678901234");
  EXPECT_THAT(flipped.Finish(),
              testing::StatusIs(absl::StatusCode::kDataLoss, ::testing::HasSubstr("at byte 14")));
  PayloadCheck short_(chunk, 25);
  short_.Add("012345678901234567890123");
  EXPECT_THAT(short_.Finish(),
              testing::StatusIs(absl::StatusCode::kDataLoss, ::testing::HasSubstr("has 24 bytes")));
  PayloadCheck long_(chunk, 25);
  long_.Add("01234567890123456789012345");
  EXPECT_THAT(long_.Finish(),
              testing::StatusIs(absl::StatusCode::kDataLoss, ::testing::HasSubstr("has 26 bytes")));
  PayloadCheck nothing(chunk, 25);
  EXPECT_THAT(nothing.Finish(), testing::StatusIs(absl::StatusCode::kDataLoss));
}

// The legend sits right of the plot; the chart widens so the longest name (estimated at
// 7.5 px a character of the 12 px font) ends inside the viewBox.
TEST(SvgTest, LegendFitsInsideTheChart) {
  const std::string name = "HPKE-P256-SHA256-AES128GCM (measured, 512 B)";
  for (const std::string& svg :
       {LineChartSvg("t", "x", false, {LinePanel{"y", false, {{name, {{1, 2}, {2, 3}}}}}}),
        BarChartSvg("t", "y", {"a"}, {{name, {1.0}}}, false, 0)}) {
    const size_t at = svg.find("viewBox=\"0 0 ");
    ASSERT_NE(at, std::string::npos);
    int width = 0;
    ASSERT_TRUE(absl::SimpleAtoi(svg.substr(at + 13, svg.find(' ', at + 13) - at - 13), &width));
    const size_t text = svg.find(absl::StrCat(">", name, "</text>"));
    ASSERT_NE(text, std::string::npos);
    const size_t x_at = svg.rfind("<text x=\"", text) + 9;
    int x = 0;
    ASSERT_TRUE(absl::SimpleAtoi(svg.substr(x_at, svg.find('"', x_at) - x_at), &x));
    EXPECT_LE(x + 7.5 * name.size(), width) << svg.substr(0, 300);
  }
}

TEST(SvgTest, ChartsAreStandaloneSvgWithEveryPoint) {
  LinePanel p{"ops/s", false, {{"SM2", {{1, 10}, {10, 100}, {100, 150}}}, {"HPKE", {{1, 12}}}}};
  const std::string line = LineChartSvg("t <&>", "in flight", true, {p});
  EXPECT_TRUE(absl::StartsWith(line, "<?xml"));
  EXPECT_TRUE(absl::StrContains(line, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_TRUE(absl::StrContains(line, "t &lt;&amp;&gt;"));
  EXPECT_TRUE(absl::EndsWith(line, "</svg>\n"));
  size_t circles = 0;
  for (size_t at = 0; (at = line.find("<circle", at)) != std::string::npos; ++at) ++circles;
  EXPECT_EQ(circles, 4u);
  const std::string bars = BarChartSvg("r", "ratio", {"8 B", "64 B"},
                                       {{"paper", {1.38, 1.23}}, {"measured", {1.1, std::nan("")}}},
                                       true, 1);
  size_t rects = 0;
  for (size_t at = 0; (at = bars.find("<rect x=", at)) != std::string::npos; ++at) ++rects;
  EXPECT_EQ(rects, 6u);  // three bars (the NaN is left out), the plot frame, two legend swatches
}

}  // namespace
}  // namespace smcrypt::load
