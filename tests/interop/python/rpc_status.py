"""google.rpc.Status and google.rpc.ErrorInfo for reading smcryptd's error reasons.

smcryptd puts a google.rpc.ErrorInfo in every error status it makes (crypto.proto,
"Errors"). With pip's grpcio-status and googleapis-common-protos a client calls
grpc_status.rpc_status.from_call(err); Debian 12 packages neither, so this module builds the
two message classes at run time from their googleapis field definitions
(google/rpc/status.proto, google/rpc/error_details.proto) with python3-protobuf, and parsing
is protobuf's own.
"""
from google.protobuf import any_pb2, descriptor_pb2, descriptor_pool, message_factory

ERROR_INFO_TYPE_URL = "type.googleapis.com/google.rpc.ErrorInfo"

def _build():
    pool = descriptor_pool.DescriptorPool()
    pool.AddSerializedFile(any_pb2.DESCRIPTOR.serialized_pb)
    f = descriptor_pb2.FileDescriptorProto(name="google/rpc/smcrypt_rpc.proto", package="google.rpc",
                                           syntax="proto3", dependency=["google/protobuf/any.proto"])
    T = descriptor_pb2.FieldDescriptorProto
    st = f.message_type.add(name="Status")
    st.field.add(name="code", number=1, type=T.TYPE_INT32, label=T.LABEL_OPTIONAL)
    st.field.add(name="message", number=2, type=T.TYPE_STRING, label=T.LABEL_OPTIONAL)
    st.field.add(name="details", number=3, type=T.TYPE_MESSAGE, label=T.LABEL_REPEATED,
                 type_name=".google.protobuf.Any")
    ei = f.message_type.add(name="ErrorInfo")
    ei.field.add(name="reason", number=1, type=T.TYPE_STRING, label=T.LABEL_OPTIONAL)
    ei.field.add(name="domain", number=2, type=T.TYPE_STRING, label=T.LABEL_OPTIONAL)
    entry = ei.nested_type.add(name="MetadataEntry")
    entry.options.map_entry = True
    entry.field.add(name="key", number=1, type=T.TYPE_STRING, label=T.LABEL_OPTIONAL)
    entry.field.add(name="value", number=2, type=T.TYPE_STRING, label=T.LABEL_OPTIONAL)
    ei.field.add(name="metadata", number=3, type=T.TYPE_MESSAGE, label=T.LABEL_REPEATED,
                 type_name=".google.rpc.ErrorInfo.MetadataEntry")
    pool.Add(f)
    get = getattr(message_factory, "GetMessageClass", None)
    if get is None:
        fac = message_factory.MessageFactory(pool)
        get = lambda d: fac.GetPrototype(d)
    return get(pool.FindMessageTypeByName("google.rpc.Status")), get(pool.FindMessageTypeByName("google.rpc.ErrorInfo"))

Status, ErrorInfo = _build()

def error_info_of_status(status_bytes):
    """The first ErrorInfo of a serialized google.rpc.Status (or smcrypt.v1.Status), or None."""
    for d in Status.FromString(status_bytes).details:
        if d.type_url == ERROR_INFO_TYPE_URL:
            return ErrorInfo.FromString(d.value)
    return None


def error_info(rpc_error):
    """The ErrorInfo of a grpc.RpcError, or None when the status has no details."""
    for k, v in (rpc_error.trailing_metadata() or ()):
        if k == "grpc-status-details-bin":
            return error_info_of_status(v)
    return None
