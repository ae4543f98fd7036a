// error_details_test: proto/error_details.h's google.rpc.Status / ErrorInfo encoding,
// checked against protobuf's own parser and serializer (DynamicMessage over the googleapis
// field definitions, built here from their field numbers and types).
#include "error_details.h"

#include <memory>
#include <string>

#include "google/protobuf/any.pb.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/descriptor.pb.h"
#include "google/protobuf/dynamic_message.h"
#include "google/protobuf/reflection.h"
#include "gtest/gtest.h"

namespace smcrypt::rpc {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::DescriptorPool;
using google::protobuf::DynamicMessageFactory;
using google::protobuf::FieldDescriptorProto;
using google::protobuf::FileDescriptorProto;
using google::protobuf::Message;

// google/rpc/status.proto's Status and google/rpc/error_details.proto's ErrorInfo.
class GoogleRpcTypes {
 public:
  GoogleRpcTypes() {
    FileDescriptorProto any;
    google::protobuf::Any::descriptor()->file()->CopyTo(&any);
    EXPECT_NE(pool_.BuildFile(any), nullptr);
    FileDescriptorProto f;
    f.set_name("google/rpc/test_rpc.proto");
    f.set_package("google.rpc");
    f.set_syntax("proto3");
    f.add_dependency("google/protobuf/any.proto");
    auto* st = f.add_message_type();
    st->set_name("Status");
    AddField(st, "code", 1, FieldDescriptorProto::TYPE_INT32, false);
    AddField(st, "message", 2, FieldDescriptorProto::TYPE_STRING, false);
    AddField(st, "details", 3, FieldDescriptorProto::TYPE_MESSAGE, true)
        ->set_type_name(".google.protobuf.Any");
    auto* ei = f.add_message_type();
    ei->set_name("ErrorInfo");
    AddField(ei, "reason", 1, FieldDescriptorProto::TYPE_STRING, false);
    AddField(ei, "domain", 2, FieldDescriptorProto::TYPE_STRING, false);
    auto* entry = ei->add_nested_type();
    entry->set_name("MetadataEntry");
    entry->mutable_options()->set_map_entry(true);
    AddField(entry, "key", 1, FieldDescriptorProto::TYPE_STRING, false);
    AddField(entry, "value", 2, FieldDescriptorProto::TYPE_STRING, false);
    AddField(ei, "metadata", 3, FieldDescriptorProto::TYPE_MESSAGE, true)
        ->set_type_name(".google.rpc.ErrorInfo.MetadataEntry");
    EXPECT_NE(pool_.BuildFile(f), nullptr);
    status_ = pool_.FindMessageTypeByName("google.rpc.Status");
    error_info_ = pool_.FindMessageTypeByName("google.rpc.ErrorInfo");
  }

  std::unique_ptr<Message> NewStatus() { return std::unique_ptr<Message>(factory_.GetPrototype(status_)->New()); }
  std::unique_ptr<Message> NewErrorInfo() {
    return std::unique_ptr<Message>(factory_.GetPrototype(error_info_)->New());
  }
  const Descriptor* error_info() const { return error_info_; }

 private:
  static FieldDescriptorProto* AddField(google::protobuf::DescriptorProto* m, const char* name,
                                        int number, FieldDescriptorProto::Type type,
                                        bool repeated) {
    FieldDescriptorProto* fd = m->add_field();
    fd->set_name(name);
    fd->set_number(number);
    fd->set_type(type);
    fd->set_label(repeated ? FieldDescriptorProto::LABEL_REPEATED
                           : FieldDescriptorProto::LABEL_OPTIONAL);
    return fd;
  }

  DescriptorPool pool_;
  DynamicMessageFactory factory_;
  const Descriptor* status_ = nullptr;
  const Descriptor* error_info_ = nullptr;
};

ErrorInfo Sample() {
  ErrorInfo info;
  info.reason = "WRONG_KEY_FAMILY";
  info.domain = std::string(kErrorDomain);
  info.metadata = {{"key_id", "sm2"}, {"key_family", "SM2"}, {"algorithm", "ECDSA-P256"}};
  return info;
}

TEST(ErrorDetailsTest, ProtobufReadsWhatWeWrite) {
  GoogleRpcTypes types;
  const std::string bytes = SerializeStatusDetails(9, "key 'sm2' is an SM2 key", Sample());
  std::unique_ptr<Message> status = types.NewStatus();
  ASSERT_TRUE(status->ParseFromString(bytes));
  const auto* r = status->GetReflection();
  const auto* d = status->GetDescriptor();
  EXPECT_EQ(r->GetInt32(*status, d->FindFieldByName("code")), 9);
  EXPECT_EQ(r->GetString(*status, d->FindFieldByName("message")), "key 'sm2' is an SM2 key");
  ASSERT_EQ(r->FieldSize(*status, d->FindFieldByName("details")), 1);
  google::protobuf::Any any;
  ASSERT_TRUE(any.ParseFromString(
      r->GetRepeatedMessage(*status, d->FindFieldByName("details"), 0).SerializeAsString()));
  EXPECT_EQ(any.type_url(), kErrorInfoTypeUrl);
  std::unique_ptr<Message> info = types.NewErrorInfo();
  ASSERT_TRUE(info->ParseFromString(any.value()));
  const auto* ir = info->GetReflection();
  const auto* id = info->GetDescriptor();
  EXPECT_EQ(ir->GetString(*info, id->FindFieldByName("reason")), "WRONG_KEY_FAMILY");
  EXPECT_EQ(ir->GetString(*info, id->FindFieldByName("domain")), "smcrypt.v1");
  EXPECT_EQ(ir->FieldSize(*info, id->FindFieldByName("metadata")), 3);
  // A negative code (not one smcryptd sends) survives as protobuf's int32 encoding.
  ASSERT_TRUE(status->ParseFromString(SerializeStatusDetails(-2, "", ErrorInfo{})));
  EXPECT_EQ(r->GetInt32(*status, d->FindFieldByName("code")), -2);
}

TEST(ErrorDetailsTest, WeReadWhatProtobufWrites) {
  GoogleRpcTypes types;
  std::unique_ptr<Message> info = types.NewErrorInfo();
  const auto* ir = info->GetReflection();
  const auto* id = info->GetDescriptor();
  ir->SetString(info.get(), id->FindFieldByName("reason"), "KEY_NOT_FOUND");
  ir->SetString(info.get(), id->FindFieldByName("domain"), "smcrypt.v1");
  Message* entry = ir->AddMessage(info.get(), id->FindFieldByName("metadata"));
  entry->GetReflection()->SetString(entry, entry->GetDescriptor()->FindFieldByName("key"), "key_id");
  entry->GetReflection()->SetString(entry, entry->GetDescriptor()->FindFieldByName("value"), "k1");

  std::unique_ptr<Message> status = types.NewStatus();
  const auto* r = status->GetReflection();
  const auto* d = status->GetDescriptor();
  r->SetInt32(status.get(), d->FindFieldByName("code"), 5);
  r->SetString(status.get(), d->FindFieldByName("message"), "unknown key_id 'k1'");
  // An Any of another type first: DecodeErrorInfo skips it.
  google::protobuf::Any other;
  other.set_type_url("type.googleapis.com/google.rpc.RetryInfo");
  other.set_value(std::string("\x0a\x02\x08\x01", 4));
  r->AddMessage(status.get(), d->FindFieldByName("details"))->ParseFromString(other.SerializeAsString());
  google::protobuf::Any any;
  any.set_type_url(std::string(kErrorInfoTypeUrl));
  any.set_value(info->SerializeAsString());
  r->AddMessage(status.get(), d->FindFieldByName("details"))->ParseFromString(any.SerializeAsString());

  std::optional<ErrorInfo> got = DecodeErrorInfoFromStatusDetails(status->SerializeAsString());
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->reason, "KEY_NOT_FOUND");
  EXPECT_EQ(got->domain, "smcrypt.v1");
  EXPECT_EQ(got->metadata, (std::map<std::string, std::string>{{"key_id", "k1"}}));

  // ParseErrorInfo agrees with protobuf on ErrorInfo alone, and round-trips ours.
  EXPECT_EQ(ParseErrorInfo(info->SerializeAsString())->reason, "KEY_NOT_FOUND");
  EXPECT_EQ(ParseErrorInfo(SerializeErrorInfo(Sample())), Sample());
}

TEST(ErrorDetailsTest, GrpcStatusCarriesTheDetails) {
  const grpc::Status s(grpc::StatusCode::INVALID_ARGUMENT, "decryption failed",
                       SerializeStatusDetails(3, "decryption failed",
                                              ErrorInfo{"DECRYPTION_FAILED", "smcrypt.v1", {}}));
  std::optional<ErrorInfo> got = DecodeErrorInfo(s);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->reason, "DECRYPTION_FAILED");
  EXPECT_FALSE(DecodeErrorInfo(grpc::Status::OK).has_value());
  EXPECT_FALSE(DecodeErrorInfo(grpc::Status(grpc::StatusCode::UNAVAILABLE, "down")).has_value());
}

TEST(ErrorDetailsTest, MalformedDetailsAreNotAnErrorInfo) {
  const std::string good = SerializeStatusDetails(3, "m", Sample());
  // Every truncation of a well-formed Status is refused or yields no ErrorInfo, never a
  // partial one.
  for (size_t n = 0; n < good.size(); ++n) {
    std::optional<ErrorInfo> got = DecodeErrorInfoFromStatusDetails(good.substr(0, n));
    if (got.has_value()) ADD_FAILURE() << "prefix of " << n << " bytes decoded";
  }
  EXPECT_FALSE(DecodeErrorInfoFromStatusDetails(std::string("\xff\xff\xff\xff\xff\xff", 6)).has_value());
  EXPECT_FALSE(DecodeErrorInfoFromStatusDetails(std::string("\x1a\x10", 2)).has_value());  // length past the end
  EXPECT_FALSE(ParseErrorInfo(std::string("\x0a\x05" "ab", 4)).has_value());
  // Unknown fields are skipped.
  std::string with_unknown = SerializeErrorInfo(Sample());
  with_unknown += std::string("\x20\x07", 2);  // field 4, varint 7
  EXPECT_EQ(ParseErrorInfo(with_unknown), Sample());
}

}  // namespace
}  // namespace smcrypt::rpc
