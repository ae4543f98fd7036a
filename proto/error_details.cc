#include "error_details.h"

#include <cstdint>

#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/wire_format_lite.h"

namespace smcrypt::rpc {
namespace {

using google::protobuf::io::CodedInputStream;
using google::protobuf::io::CodedOutputStream;
using google::protobuf::io::StringOutputStream;
using google::protobuf::internal::WireFormatLite;

constexpr uint32_t LengthDelimitedTag(int field) {
  return (static_cast<uint32_t>(field) << 3) |
         static_cast<uint32_t>(WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
}

void WriteBytes(CodedOutputStream& out, int field, absl::string_view value) {
  out.WriteTag(LengthDelimitedTag(field));
  out.WriteVarint32(static_cast<uint32_t>(value.size()));
  out.WriteRaw(value.data(), static_cast<int>(value.size()));
}

template <typename Fn>
std::string Serialize(Fn&& fn) {
  std::string bytes;
  {
    StringOutputStream stream(&bytes);
    CodedOutputStream out(&stream);
    fn(out);
  }
  return bytes;
}

// ForEachField calls fn(field, wire_type, in) for each field of the message in `bytes`;
// fn reads the value (length-delimited values through ReadLengthDelimited) or returns
// false to have it skipped. False on malformed input.
template <typename Fn>
bool ForEachField(absl::string_view bytes, Fn&& fn) {
  CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                      static_cast<int>(bytes.size()));
  while (true) {
    const uint32_t tag = in.ReadTag();
    if (tag == 0) return in.CurrentPosition() == static_cast<int>(bytes.size());
    bool handled = false;
    if (!fn(static_cast<int>(WireFormatLite::GetTagFieldNumber(tag)),
            WireFormatLite::GetTagWireType(tag), in, handled)) {
      return false;
    }
    if (!handled && !WireFormatLite::SkipField(&in, tag)) return false;
  }
}

bool ReadLengthDelimited(CodedInputStream& in, std::string* out) {
  uint32_t size = 0;
  if (!in.ReadVarint32(&size)) return false;
  return in.ReadString(out, static_cast<int>(size));
}

}  // namespace

std::string SerializeErrorInfo(const ErrorInfo& info) {
  return Serialize([&](CodedOutputStream& out) {
    WriteBytes(out, 1, info.reason);
    WriteBytes(out, 2, info.domain);
    for (const auto& kv : info.metadata) {
      const std::string entry = Serialize([&](CodedOutputStream& e) {
        WriteBytes(e, 1, kv.first);
        WriteBytes(e, 2, kv.second);
      });
      WriteBytes(out, 3, entry);
    }
  });
}

std::optional<ErrorInfo> ParseErrorInfo(absl::string_view bytes) {
  ErrorInfo info;
  const bool ok = ForEachField(bytes, [&](int field, WireFormatLite::WireType type,
                                          CodedInputStream& in, bool& handled) {
    if (type != WireFormatLite::WIRETYPE_LENGTH_DELIMITED || field < 1 || field > 3) return true;
    handled = true;
    std::string value;
    if (!ReadLengthDelimited(in, &value)) return false;
    if (field == 1) info.reason = std::move(value);
    if (field == 2) info.domain = std::move(value);
    if (field == 3) {
      std::string key, val;
      const bool entry_ok = ForEachField(value, [&](int f, WireFormatLite::WireType t,
                                                    CodedInputStream& e, bool& h) {
        if (t != WireFormatLite::WIRETYPE_LENGTH_DELIMITED || (f != 1 && f != 2)) return true;
        h = true;
        return ReadLengthDelimited(e, f == 1 ? &key : &val);
      });
      if (!entry_ok) return false;
      info.metadata[std::move(key)] = std::move(val);
    }
    return true;
  });
  if (!ok) return std::nullopt;
  return info;
}

std::string SerializeStatusDetails(int code, absl::string_view message, const ErrorInfo& info) {
  const std::string any = Serialize([&](CodedOutputStream& out) {
    WriteBytes(out, 1, kErrorInfoTypeUrl);
    WriteBytes(out, 2, SerializeErrorInfo(info));
  });
  return Serialize([&](CodedOutputStream& out) {
    out.WriteTag((1u << 3) | static_cast<uint32_t>(WireFormatLite::WIRETYPE_VARINT));
    out.WriteVarint32SignExtended(code);
    WriteBytes(out, 2, message);
    WriteBytes(out, 3, any);
  });
}

std::optional<ErrorInfo> DecodeErrorInfoFromStatusDetails(absl::string_view status_details) {
  std::optional<ErrorInfo> found;
  const bool ok = ForEachField(status_details, [&](int field, WireFormatLite::WireType type,
                                                   CodedInputStream& in, bool& handled) {
    if (field != 3 || type != WireFormatLite::WIRETYPE_LENGTH_DELIMITED) return true;
    handled = true;
    std::string any;
    if (!ReadLengthDelimited(in, &any)) return false;
    if (found.has_value()) return true;
    std::string type_url, value;
    const bool any_ok = ForEachField(any, [&](int f, WireFormatLite::WireType t,
                                              CodedInputStream& a, bool& h) {
      if (t != WireFormatLite::WIRETYPE_LENGTH_DELIMITED || (f != 1 && f != 2)) return true;
      h = true;
      return ReadLengthDelimited(a, f == 1 ? &type_url : &value);
    });
    if (!any_ok) return false;
    if (type_url == kErrorInfoTypeUrl) {
      found = ParseErrorInfo(value);
      if (!found.has_value()) return false;
    }
    return true;
  });
  if (!ok) return std::nullopt;
  return found;
}

std::optional<ErrorInfo> DecodeErrorInfo(const grpc::Status& status) {
  if (status.ok() || status.error_details().empty()) return std::nullopt;
  return DecodeErrorInfoFromStatusDetails(status.error_details());
}

}  // namespace smcrypt::rpc
