// Pins the wire enum smcrypt.v1.Algorithm (proto/smcrypt/v1/crypto.proto) to the engine's
// algorithm list (label unit). The service maps proto value v to AllAlgorithms()[v - 1]
// (ToAlgorithm in server/service/proto_convert.cc), so reordering, inserting into or
// removing from either list silently changes what a client's number means; this test
// fails instead.
//
// Naming rule, from the two lists: the proto value's name is the canonical AlgorithmName
// (algorithm.h, docs/design.md "Names used everywhere") upper-cased with every '-' turned into
// '_' ("SM4-GCM" <-> SM4_GCM, "HPKE-SM2-SM3-SM4GCM" <-> HPKE_SM2_SM3_SM4GCM). Value 0 is
// ALGORITHM_UNSPECIFIED and has no engine algorithm.
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "server/engine/crypto_engine.h"
#include "smcrypt/algorithm.h"
#include "smcrypt/v1/crypto.pb.h"

namespace smcrypt::server {
namespace {

namespace v1 = ::smcrypt::v1;

// ProtoNameOf is the proto enum value name the naming rule gives for `alg`.
std::string ProtoNameOf(Algorithm alg) {
  return absl::AsciiStrToUpper(absl::StrReplaceAll(AlgorithmName(alg), {{"-", "_"}}));
}

TEST(ProtoAlgorithmTest, UnspecifiedIsZero) {
  const google::protobuf::EnumDescriptor* d = v1::Algorithm_descriptor();
  const google::protobuf::EnumValueDescriptor* zero = d->FindValueByNumber(0);
  ASSERT_NE(zero, nullptr);
  EXPECT_EQ(zero->name(), "ALGORITHM_UNSPECIFIED");
}

// Every proto value v >= 1 is the engine's AllAlgorithms()[v - 1], by name.
TEST(ProtoAlgorithmTest, EveryProtoValueNamesTheEngineAlgorithmAtItsIndex) {
  const google::protobuf::EnumDescriptor* d = v1::Algorithm_descriptor();
  absl::Span<const Algorithm> all = AllAlgorithms();
  for (int i = 0; i < d->value_count(); ++i) {
    const google::protobuf::EnumValueDescriptor* value = d->value(i);
    const int v = value->number();
    if (v == 0) continue;
    ASSERT_GE(v, 1) << value->name() << " has a negative number";
    ASSERT_LE(v, static_cast<int>(all.size()))
        << value->name() << " = " << v << " has no engine algorithm (AllAlgorithms() has "
        << all.size() << ")";
    EXPECT_EQ(value->name(), ProtoNameOf(all[v - 1]))
        << "proto value " << v << " is " << value->name() << " but AllAlgorithms()[" << v - 1
        << "] is " << AlgorithmName(all[v - 1]);
  }
}

// Every engine algorithm has the proto value of its index plus one, with its name.
TEST(ProtoAlgorithmTest, EveryEngineAlgorithmHasAProtoValue) {
  const google::protobuf::EnumDescriptor* d = v1::Algorithm_descriptor();
  absl::Span<const Algorithm> all = AllAlgorithms();
  for (size_t i = 0; i < all.size(); ++i) {
    const int v = static_cast<int>(i) + 1;
    const google::protobuf::EnumValueDescriptor* value = d->FindValueByNumber(v);
    ASSERT_NE(value, nullptr) << AlgorithmName(all[i]) << " (AllAlgorithms()[" << i
                              << "]) has no proto value " << v;
    EXPECT_EQ(value->name(), ProtoNameOf(all[i]));
  }
}

// Same size, no aliases: the proto has ALGORITHM_UNSPECIFIED plus one value per engine
// algorithm, and the engine list holds each Algorithm once, in declaration order (the
// order algorithm.h and crypto.proto both document).
TEST(ProtoAlgorithmTest, CountsAreEqualAndListsHaveNoDuplicates) {
  const google::protobuf::EnumDescriptor* d = v1::Algorithm_descriptor();
  absl::Span<const Algorithm> all = AllAlgorithms();
  EXPECT_EQ(d->value_count(), static_cast<int>(all.size()) + 1)
      << "crypto.proto's Algorithm (with ALGORITHM_UNSPECIFIED) and AllAlgorithms() differ";
  for (int i = 0; i < d->value_count(); ++i) {
    EXPECT_EQ(d->FindValueByNumber(d->value(i)->number()), d->value(i))
        << d->value(i)->name() << " aliases another value's number";
  }
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(static_cast<size_t>(all[i]), i)
        << "AllAlgorithms()[" << i << "] is " << AlgorithmName(all[i])
        << ", not the Algorithm declared at that position";
  }
  // algorithm.cc's name table covers exactly the enum (static_asserts there), so the first
  // number past AllAlgorithms() must have no name: the list omits no Algorithm.
  EXPECT_EQ(AlgorithmName(static_cast<Algorithm>(all.size())), "UNKNOWN")
      << "an Algorithm declared after AllAlgorithms()'s last entry is missing from it";
}

}  // namespace
}  // namespace smcrypt::server
