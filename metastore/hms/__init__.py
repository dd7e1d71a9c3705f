"""The Thrift door: the HMS protocol on its port. The server (`server`: the event loop,
workers, limits), the wire (`wire`: where a request ends), security (`security`, `sasl`,
`tls`), the handler of the calls by domain (`handler`), the `call` decorator that runs each
as an operation of the core and translates its errors (`call`), the conversions between
the IDL's structs and rows (`structs`) and the answers of the read calls (`answers`).
"""
