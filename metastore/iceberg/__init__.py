"""What colstats knows of Apache Iceberg tables: how to recognize them in the metastore, read
their snapshots, and write the Puffin statistics files their engines read."""
