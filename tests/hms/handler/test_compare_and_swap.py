"""Compare-and-swap of a table parameter (HIVE-26882): an alter whose environment context (or
AlterTableRequest) names expected_parameter_key and expected_parameter_value is made only while
the stored parameter has that value, checked in the alter's own transaction. Java Iceberg runs
with its HMS lock off on it: two writers that both read the same metadata_location both pass
the client's own check, and one of their swaps must be refused with HMS's message, which
Java Iceberg turns into CommitFailedException."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from conftest import RunningServer, connect
from metadata_builders import Client, database, table

from hive_metastore_thrift import ttypes as t

KEY = "metadata_location"


def iceberg_table(db: str, name: str, location: str) -> t.Table:
    return table(
        db,
        name,
        tableType="EXTERNAL_TABLE",
        parameters={"EXTERNAL": "TRUE", "table_type": "ICEBERG", KEY: location},
    )


def swap(client: Client, db: str, name: str, expected: str, new: str) -> None:
    """What Java Iceberg's HiveTableOperations sends for a commit with its lock off."""
    current = client.get_table(db, name)
    current.parameters = {**current.parameters, KEY: new, "previous_metadata_location": expected}
    context = t.EnvironmentContext(
        {
            "expected_parameter_key": KEY,
            "expected_parameter_value": expected,
            "DO_NOT_UPDATE_STATS": "true",
        }
    )
    client.alter_table_with_environment_context(db, name, current, context)


def refusal(stored: str, expected: str) -> str:
    """HMS's message (its typo included: Java Iceberg matches the words before it)."""
    return (
        f"The table has been modified. The parameter value for key '{KEY}' is '{stored}'. "
        f"The expected was value was '{expected}'"
    )


@pytest.fixture
def db(client: Client, db_name: str) -> Iterator[str]:
    client.create_database(database(db_name))
    yield db_name
    client.drop_database(db_name, True, True)


def test_a_swap_from_the_stored_value_is_made(client: Client, db: str) -> None:
    client.create_table(iceberg_table(db, "t", "s3://m/00000.json"))
    swap(client, db, "t", "s3://m/00000.json", "s3://m/00001.json")
    stored = client.get_table(db, "t").parameters
    assert stored[KEY] == "s3://m/00001.json"
    assert stored["previous_metadata_location"] == "s3://m/00000.json"


def test_of_two_writers_from_one_version_the_second_is_refused(client: Client, db: str) -> None:
    client.create_table(iceberg_table(db, "t", "v0"))
    # both writers read v0 and pass their own checks; the first swaps
    swap(client, db, "t", "v0", "v1-first")
    with pytest.raises(t.MetaException) as refused:
        swap(client, db, "t", "v0", "v1-second")
    assert refused.value.message == refusal("v1-first", "v0")
    assert client.get_table(db, "t").parameters[KEY] == "v1-first"


def test_a_parameter_that_is_not_set_reads_null(client: Client, db: str) -> None:
    client.create_table(table(db, "plain"))
    with pytest.raises(t.MetaException) as refused:
        swap(client, db, "plain", "v0", "v1")
    assert refused.value.message == refusal("null", "v0")


def test_alter_table_req_compares_and_swaps_too(client: Client, db: str) -> None:
    client.create_table(iceberg_table(db, "t", "v0"))
    new = client.get_table(db, "t")
    new.parameters = {**new.parameters, KEY: "v1"}
    request = t.AlterTableRequest(
        dbName=db, tableName="t", table=new, expectedParameterKey=KEY, expectedParameterValue="v0"
    )
    assert client.alter_table_req(request) == t.AlterTableResponse()
    new.parameters = {**new.parameters, KEY: "v2"}
    with pytest.raises(t.MetaException) as refused:
        client.alter_table_req(request)  # still expects v0
    assert refused.value.message == refusal("v1", "v0")
    assert client.get_table(db, "t").parameters[KEY] == "v1"


def test_an_alter_without_an_expected_value_swaps_as_before(client: Client, db: str) -> None:
    client.create_table(iceberg_table(db, "t", "v0"))
    new = client.get_table(db, "t")
    new.parameters = {**new.parameters, KEY: "v9"}
    client.alter_table_with_environment_context(db, "t", new, None)
    assert client.get_table(db, "t").parameters[KEY] == "v9"


@pytest.fixture
def ports(server: RunningServer) -> Iterator[list[int]]:
    """The module's server and a second one on its database."""
    second = RunningServer(server.url, server.settings)
    yield [server.port, second.port]
    second.stop()


def _racing_swap(
    port: int, db: str, expected: str, new: str, barrier: threading.Barrier, outcomes: list[str]
) -> None:
    """One writer of a round: reads the table, waits for the others, swaps EXPECTED for NEW;
    records NEW when its swap was made, "refused" when not."""
    own, transport = connect(port)
    try:
        current = own.get_table(db, "t")
        current.parameters = {**current.parameters, KEY: new}
        context = t.EnvironmentContext(
            {"expected_parameter_key": KEY, "expected_parameter_value": expected}
        )
        barrier.wait(timeout=30)
        try:
            own.alter_table_with_environment_context(db, "t", current, context)
            outcomes.append(new)
        except t.MetaException as e:
            assert e.message.startswith("The table has been modified."), e.message
            outcomes.append("refused")
    finally:
        transport.close()


def test_racing_writers_on_two_servers_swap_one_at_a_time(
    client: Client, db: str, ports: list[int]
) -> None:
    """Rounds of six writers, on two servers, that all read the same version and swap at the
    same moment: exactly one swap per round is made, and the others are refused."""
    client.create_table(iceberg_table(db, "t", "v0"))
    writers = 6
    for round_ in range(8):
        expected = client.get_table(db, "t").parameters[KEY]
        barrier = threading.Barrier(writers)
        outcomes: list[str] = []
        threads = [
            threading.Thread(
                target=_racing_swap,
                args=(ports[i % 2], db, expected, f"v{round_ + 1}-{i}", barrier, outcomes),
            )
            for i in range(writers)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        made = [o for o in outcomes if o != "refused"]
        assert len(outcomes) == writers and len(made) == 1, outcomes
        assert client.get_table(db, "t").parameters[KEY] == made[0]
