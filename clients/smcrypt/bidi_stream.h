// bidi_stream.h — driving a bidirectional streaming RPC from the synchronous stub.
#ifndef SMCRYPT_CLIENTS_SMCRYPT_BIDI_STREAM_H_
#define SMCRYPT_CLIENTS_SMCRYPT_BIDI_STREAM_H_

#include <optional>
#include <thread>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "clients/smcrypt/session.h"
#include "grpcpp/grpcpp.h"

namespace smcrypt::cli {

// PumpBidiStream sends the requests `next` yields while a second thread hands every
// response to `sink`, so neither direction's flow control can stall the other; then it
// half-closes and returns the call's outcome. `next` returns nullopt at the end of the
// input or an error to abort; an error from `next` or `sink` cancels the call and is
// returned in preference to the RPC status (which then only says CANCELLED).
template <typename Req, typename Resp>
absl::Status PumpBidiStream(grpc::ClientContext& ctx,
                            grpc::ClientReaderWriter<Req, Resp>& stream,
                            absl::FunctionRef<absl::StatusOr<std::optional<Req>>()> next,
                            absl::FunctionRef<absl::Status(const Resp&)> sink) {
  absl::Status sink_status;
  std::thread reader([&] {
    Resp resp;
    while (stream.Read(&resp)) {
      if (!sink_status.ok()) continue;
      sink_status = sink(resp);
      if (!sink_status.ok()) ctx.TryCancel();
    }
  });
  absl::Status source_status;
  for (;;) {
    absl::StatusOr<std::optional<Req>> req = next();
    if (!req.ok()) {
      source_status = req.status();
      ctx.TryCancel();
      break;
    }
    if (!req->has_value()) break;
    if (!stream.Write(**req)) break;  // the call ended; Finish has the status
  }
  stream.WritesDone();
  reader.join();
  grpc::Status status = stream.Finish();
  if (!source_status.ok()) return source_status;
  if (!sink_status.ok()) return sink_status;
  return status.ok() ? absl::OkStatus() : RpcStatus(status);
}

}  // namespace smcrypt::cli

#endif  // SMCRYPT_CLIENTS_SMCRYPT_BIDI_STREAM_H_
