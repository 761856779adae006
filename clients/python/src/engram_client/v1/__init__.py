"""The engram.v1 protobuf messages and gRPC stubs, generated from
proto/engram/v1 by generate.py (grpcio-tools and mypy-protobuf)."""
