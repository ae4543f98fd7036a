#include "server/service/batch_runner.h"

#include <chrono>
#include <string>

#include "server/service/proto_convert.h"

namespace smcrypt::server {

// StillWanted is checked between the items of a batch, so a long batch stops once its
// deadline has passed or the client has cancelled, instead of running to the end.
absl::Status StillWanted(grpc::CallbackServerContext* ctx) {
  // An expired deadline also cancels the call, so the deadline is checked first.
  if (ctx->deadline() < std::chrono::system_clock::now()) {
    return absl::DeadlineExceededError("the deadline passed while the batch was running");
  }
  if (ctx->IsCancelled()) return absl::CancelledError("the client cancelled the batch");
  return absl::OkStatus();
}

namespace {

// A call whose client went away or whose deadline passed while it was queued is
// answered without doing the work (gRPC has already ended it), as in Unary.
absl::Status NotWanted() { return absl::CancelledError("the call ended while it was queued"); }

// RunQueued answers a run of queued calls as their unary handler would: each call still
// wanted is checked with the handler's MethodSpec (Check: cancellation, access policy,
// parsing, in that spec's order), the calls that pass go to the engine's batch operation
// in one call, and each call is answered with its own status, write(response, value,
// input) filling the response of a success; an audited method audits each allowed call.
template <typename Call, typename Parse, typename Engine, typename Write>
void RunQueued(const CryptoServiceImpl& svc, const MethodSpec& spec, absl::Span<Call> calls,
               const Parse& parse, const Engine& engine, const Write& write) {
  using In = InputOf<Parse, typename Call::Request>;
  CheckAndRun<In>(
      calls.size(),
      [&](size_t i) -> Checked<In> {
        const Call& c = calls[i];
        if (c.ctx->IsCancelled()) return {NotWanted(), false};
        return Check(svc, spec, c.ctx, *c.request, PolicyScope::kCall, parse);
      },
      engine,
      [&](size_t i, auto result, const Checked<In>& checked, const In* input) {
        const Call& c = calls[i];
        if (result.ok()) write(c.response, *std::move(result), *input);
        if (checked.audit) {
          AuditItem(svc, spec, c.ctx, *c.request, result.status(), checked, input);
        }
        FinishQueued(c, result.status());
      });
}

void RunSignBatch(const CryptoServiceImpl& svc, absl::Span<SignCall> calls) {
  RunQueued(
      svc, rpc::kSign, calls, SignItemFrom,
      [&](absl::Span<const SignItem> items) { return svc.engine().SignBatch(items); },
      [](v1::SignResponse* r, std::string sig, const SignItem& in) {
        r->set_signature(std::move(sig));
        r->set_key_version(ReportedVersion(in));
      });
}

void RunVerifyBatch(const CryptoServiceImpl& svc, absl::Span<VerifyCall> calls) {
  RunQueued(
      svc, rpc::kVerify, calls, VerifyItemFrom,
      [&](absl::Span<const VerifyItem> items) { return svc.engine().VerifyBatch(items); },
      [](v1::VerifyResponse* r, bool valid, const VerifyItem& in) {
        r->set_valid(valid);
        if (valid) r->set_key_version(ReportedVersion(in));
      });
}

void RunHashBatch(const CryptoServiceImpl& svc, absl::Span<HashCall> calls) {
  // The queue takes SM3 only, so every item is {kSm3, data}.
  RunQueued(
      svc, rpc::kHash, calls, HashItemFrom,
      [&](absl::Span<const HashItem> items) { return svc.engine().HashBatch(items); },
      [](v1::HashResponse* r, std::string digest, const HashItem&) {
        r->set_digest(std::move(digest));
      });
}

void RunPublicKeyEncryptBatch(const CryptoServiceImpl& svc,
                              absl::Span<PublicKeyEncryptCall> calls) {
  RunQueued(
      svc, rpc::kPublicKeyEncrypt, calls, PublicKeyEncryptItemFrom,
      [&](absl::Span<const PublicKeyEncryptItem> items) {
        return svc.engine().PublicKeyEncryptBatch(items);
      },
      [](v1::PublicKeyEncryptResponse* r, std::string ct, const PublicKeyEncryptItem& in) {
        r->set_ciphertext(std::move(ct));
        r->set_key_version(ReportedVersion(in));
      });
}

void RunHybridEncryptBatch(const CryptoServiceImpl& svc, absl::Span<HybridEncryptCall> calls) {
  RunQueued(
      svc, rpc::kHybridEncrypt, calls, HybridEncryptItemFrom,
      [&](absl::Span<const HybridEncryptItem> items) {
        return svc.engine().HybridEncryptBatch(items);
      },
      [](v1::HybridEncryptResponse* r, std::string ct, const HybridEncryptItem& in) {
        r->set_ciphertext(std::move(ct));
        r->set_key_version(ReportedVersion(in));
      });
}

}  // namespace

CryptoServiceImpl::BatchQueues::BatchQueues(const CryptoServiceImpl* svc,
                                            const BatchSettings& settings, size_t runners,
                                            BatchQueue<SignCall>::Submit submit,
                                            BatchObserver* observer)
      : sign(*rpc::kSign.queue, settings, runners, submit,
             [svc](absl::Span<SignCall> b) { RunSignBatch(*svc, b); }, observer),
        verify(*rpc::kVerify.queue, settings, runners, submit,
               [svc](absl::Span<VerifyCall> b) { RunVerifyBatch(*svc, b); }, observer),
        // A hash of at most kMaxBatchedHashSize bytes costs less than handing it to a
        // worker: its batches run on the gRPC thread that received the call.
        hash(*rpc::kHash.queue, settings, std::max<size_t>(runners, 2), nullptr,
             [svc](absl::Span<HashCall> b) { RunHashBatch(*svc, b); }, observer),
        public_key_encrypt(
            *rpc::kPublicKeyEncrypt.queue, settings, runners, submit,
            [svc](absl::Span<PublicKeyEncryptCall> b) { RunPublicKeyEncryptBatch(*svc, b); },
            observer),
        hybrid_encrypt(
            *rpc::kHybridEncrypt.queue, settings, runners, submit,
            [svc](absl::Span<HybridEncryptCall> b) { RunHybridEncryptBatch(*svc, b); },
            observer) {}

void CryptoServiceImpl::BatchQueues::WaitIdle() {
  sign.WaitIdle();
  verify.WaitIdle();
  hash.WaitIdle();
  public_key_encrypt.WaitIdle();
  hybrid_encrypt.WaitIdle();
}

}  // namespace smcrypt::server
