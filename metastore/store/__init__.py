"""The HMS schema in a database: the models, engines and transactions, migrations, and the
queries of the metadata (databases, tables, storage descriptors, parameters, partitions and
their filters), the lookups by name and the table versions. Nothing here knows the IDL.
"""
