"""Settings: defaults < TOML file < environment < flags, with coercion and clear refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from metastore import config
from metastore.config import Settings, SettingsError


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("CONFIG", "HOME", *(f.upper() for f in Settings.__dataclass_fields__)):
        monkeypatch.delenv(f"METASTORE_{key}", raising=False)


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "metastore.toml"
    path.write_text(text)
    return str(path)


def test_defaults() -> None:
    assert config.load() == Settings()
    assert Settings().port == 9083 and Settings().migrate is True


def test_file_then_environment_then_flags(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path, 'port = 1000\nworkers = 7\nhost = "file"\nfetch_bitvector = true\n')
    assert config.load(path) == Settings(port=1000, workers=7, host="file", fetch_bitvector=True)
    monkeypatch.setenv("METASTORE_PORT", "2000")
    monkeypatch.setenv("METASTORE_HOST", "env")
    settings = config.load(path, host="flag", workers=None)
    assert (settings.port, settings.host, settings.workers) == (2000, "flag", 7)
    assert config.load(path, port=3000).port == 3000


def test_the_file_can_be_named_by_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("METASTORE_CONFIG", write(tmp_path, 'log_level = "DEBUG"\n'))
    assert config.load().log_level == "DEBUG"


@pytest.mark.parametrize(
    ("text", "value"),
    [
        *[("1", True), ("true", True), ("Yes", True), ("on", True)],
        *[("0", False), ("false", False), ("NO", False), (" off ", False)],
    ],
)
def test_booleans_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, text: str, value: bool
) -> None:
    monkeypatch.setenv("METASTORE_MIGRATE", text)
    assert config.load().migrate is value


@pytest.mark.parametrize(
    ("variable", "text", "message"),
    [
        ("METASTORE_PORT", "90x", "METASTORE_PORT: port must be an integer, not '90x'"),
        ("METASTORE_FRAMED", "maybe", "METASTORE_FRAMED: framed must be true or false"),
    ],
)
def test_bad_environment_values_are_named(
    monkeypatch: pytest.MonkeyPatch, variable: str, text: str, message: str
) -> None:
    monkeypatch.setenv(variable, text)
    with pytest.raises(SettingsError, match=message):
        config.load()


def test_wrong_types_in_the_file_are_refused(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="port must be an integer, not True"):
        config.load(write(tmp_path, "port = true\n"))
    with pytest.raises(SettingsError, match="host must be text, not 5"):
        config.load(write(tmp_path, "host = 5\n"))
    with pytest.raises(SettingsError, match="workers must be an integer, not 'many'"):
        config.load(write(tmp_path, 'workers = "many"\n'))


def test_unknown_keys_are_refused_with_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match=r"unknown setting\(s\) prot, wokers; the settings are"):
        config.load(write(tmp_path, "prot = 1\nwokers = 2\n"))
    with pytest.raises(TypeError, match="unknown setting 'prot'"):
        config.load(prot=1)


def test_unreadable_and_invalid_files(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="cannot read the settings file"):
        config.load(str(tmp_path / "missing.toml"))
    with pytest.raises(SettingsError, match="is not valid TOML"):
        config.load(write(tmp_path, "port = \n"))


def test_the_embedded_database_lives_in_metastore_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("METASTORE_HOME", str(tmp_path / "home"))
    assert Settings().database_url() == f"sqlite:///{tmp_path / 'home' / 'metastore.db'}"
    assert (tmp_path / "home").is_dir()
    assert Settings(db="postgresql+psycopg://h/db").database_url() == "postgresql+psycopg://h/db"


def test_object_storage_settings_from_the_file_and_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "m.toml"
    # Quoted dotted keys and TOML's nested tables read alike; booleans as Hadoop writes them.
    path.write_text(
        '[s3a]\n"fs.s3a.endpoint" = "http://minio:9000"\n'
        'fs.s3a.path.style.access = true\n"fs.s3a.secret.key" = "s3cr3t"\n'
    )
    settings = config.load(str(path))
    assert settings.s3a == (
        ("fs.s3a.endpoint", "http://minio:9000"),
        ("fs.s3a.path.style.access", "true"),
        ("fs.s3a.secret.key", "s3cr3t"),
    )
    assert "s3cr3t" not in repr(settings)
    monkeypatch.setenv(
        "METASTORE_S3A", "fs.s3a.endpoint=http://other:9000, fs.s3a.attempts.maximum=1"
    )
    assert config.load(str(path)).s3a == (
        ("fs.s3a.attempts.maximum", "1"),
        ("fs.s3a.endpoint", "http://other:9000"),
    )


def test_object_storage_settings_that_are_not_s3a_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "m.toml"
    path.write_text('[s3a]\nendpoint = "http://minio:9000"\n')
    with pytest.raises(SettingsError, match=r"s3a takes Hadoop's S3A keys .*, not endpoint$"):
        config.load(str(path))
    monkeypatch.setenv("METASTORE_S3A", "fs.s3a.endpoint")
    with pytest.raises(SettingsError, match=r"METASTORE_S3A: s3a takes KEY=VALUE items"):
        config.load()
    monkeypatch.setenv("METASTORE_S3A", "spark.hadoop.fs.s3a.endpoint=x")
    with pytest.raises(SettingsError, match=r"not spark.hadoop.fs.s3a.endpoint$"):
        config.load()
