"""Reading S3 Inventory reports (docs/operations.md): manifest, layout, formats, verification.

Reports are written by ``tests.inventory_fixtures`` in the layout and formats AWS
documents, into moto, and read back through ``video_index.ops.inventory``.
"""

from __future__ import annotations

import gzip
import json
import os
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from moto import mock_aws

from video_index.ops.inventory import (
    InventoryError,
    InventoryObject,
    Manifest,
    find_latest_manifest,
    iter_batches,
    iter_objects,
    parse_s3_uri,
    read_manifest,
)
from worlds.inventory_files import FORMATS, Row, file_schema
from worlds.inventory_fixtures import (
    destination_uri,
    replace_object,
    rewrite_manifest,
    write_inventory,
    write_inventory_stream,
)

SOURCE = "video-index-segments"
DEST = "video-index-reports"
PREFIX = "inventory"
CONFIG = "video-index-daily"
CREATED = datetime(2026, 11, 30, 1, 0, tzinfo=UTC)
MODIFIED = datetime(2026, 11, 30, 0, 12, 34, 567000, tzinfo=UTC)

VALID_KEYS = (
    "v1/video/cam-001/2026/11/30/12/20261130T120000.000Z_10000_3f9a1c2e7b4d5a60.mp4",
    "v1/sensor/cam-001/2026/11/30/12/20261130T120000.000Z_0_0a1b2c3d4e5f6071.json",
)
#: Foreign keys whose URL encoding is easy to get wrong.
AWKWARD_KEYS = (
    "tmp/ünï cödé %2B+.bin",
    "tmp/a b+c%d.txt",
    "tmp/plus+only",
    "tmp/percent%20literal",
    "tmp/日本語/ファイル 1.ts",
    'tmp/quote"comma,semicolon;.txt',
    "tmp/trailing space ",
    "tmp/slash//double",
    "tmp/emoji 🎥.mp4",
)


def row(
    key: str, size: int | None = 1234, etag: str | None = "0123456789abcdef0123456789abcdef"
) -> Row:
    return (key, size, etag, MODIFIED)


def expected(rows: list[Row]) -> Counter[InventoryObject]:
    return Counter(InventoryObject(k, s, e, m) for k, s, e, m in rows)


@pytest.fixture
def s3() -> Iterator[Any]:
    with mock_aws():
        client = boto3.client("s3", region_name="us-east-1")
        client.create_bucket(Bucket=SOURCE)
        client.create_bucket(Bucket=DEST)
        yield client


def write(s3: Any, rows: list[Row], fmt: str, **options: Any) -> str:
    arguments: dict[str, Any] = {
        "dest_bucket": DEST,
        "prefix": PREFIX,
        "source_bucket": SOURCE,
        "config_id": CONFIG,
        "objects": rows,
        "fmt": fmt,
        "created": CREATED,
    }
    arguments.update(options)
    return write_inventory(s3, **arguments)


def read_all(s3: Any, uri: str, **options: Any) -> list[InventoryObject]:
    return list(iter_objects(s3, read_manifest(s3, uri), **options))


def data_keys(s3: Any, uri: str) -> list[str]:
    return [data_file.key for data_file in read_manifest(s3, uri).files]


# --- round trips -------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_round_trip_returns_every_row_with_keys_decoded(s3: Any, fmt: str) -> None:
    # Given a report with valid v1 keys, foreign keys full of characters URL encoding
    # touches (space, '+', '%', unicode), and a row without size and ETag
    rows = [row(key) for key in (*VALID_KEYS, *AWKWARD_KEYS)]
    rows.append(("tmp/no size", None, None, None))
    uri = write(s3, rows, fmt)

    # When it is read
    objects = read_all(s3, uri)

    # Then every row comes back exactly once, keys as they are in S3
    assert Counter(objects) == expected(rows)
    assert {o.key for o in objects} >= set(AWKWARD_KEYS)
    assert all(o.is_latest for o in objects)


def test_csv_keys_are_stored_url_encoded_and_decoded_form_style(s3: Any) -> None:
    # Given a CSV report (keys written with quote_plus, as S3 does)
    uri = write(s3, [row("tmp/a b+c%d.txt")], "CSV")
    (data_key,) = data_keys(s3, uri)

    # When the raw data file is looked at
    raw = gzip.decompress(s3.get_object(Bucket=DEST, Key=data_key)["Body"].read()).decode()

    # Then the key is encoded (space '+', plus '%2B', percent '%25'), every field quoted,
    # there is no header; and the reader gives the original key back
    assert raw.startswith(f'"{SOURCE}","tmp%2Fa+b%2Bc%25d.txt","1234",')
    assert raw.count("\n") == 1
    assert [o.key for o in read_all(s3, uri)] == ["tmp/a b+c%d.txt"]


def test_csv_keys_with_unencoded_slashes_decode_the_same(s3: Any) -> None:
    # Given a CSV report whose encoder leaves '/' alone
    uri = write(s3, [row(key) for key in AWKWARD_KEYS], "CSV", quote_safe="/")

    # When it is read
    # Then the keys are the same as with '/' encoded
    assert sorted(o.key for o in read_all(s3, uri)) == sorted(AWKWARD_KEYS)


@pytest.mark.parametrize("fmt", FORMATS)
def test_rows_split_over_several_data_files_are_all_read(s3: Any, fmt: str) -> None:
    # Given a report of 1000 rows over 3 data files, written in small groups
    rows = [row(f"v1/video/cam-{i % 7:03d}/x{i}.mp4", size=i) for i in range(1000)]
    uri = write(s3, rows, fmt, files=3, rows_per_group=64, orc_stripe_bytes=4096)

    # When it is read in small batches
    manifest = read_manifest(s3, uri)
    objects = list(iter_objects(s3, manifest, batch_rows=50))

    # Then the manifest lists 3 files and every row comes back once
    assert len(manifest.files) == 3
    assert len({f.key for f in manifest.files}) == 3
    assert Counter(objects) == expected(rows)


def test_orc_is_read_stripe_by_stripe(s3: Any) -> None:
    # Given an ORC report written with tiny stripes
    import pyarrow.orc as orc

    rows = [row(f"tmp/{i:05d}", size=i) for i in range(5000)]
    uri = write(s3, rows, "ORC", rows_per_group=500, orc_stripe_bytes=1024)
    (data_key,) = data_keys(s3, uri)
    local = Path(os.environ.get("TMPDIR", "/tmp")) / "inventory-stripes.orc"
    local.write_bytes(s3.get_object(Bucket=DEST, Key=data_key)["Body"].read())
    try:
        assert orc.ORCFile(str(local)).nstripes > 1
    finally:
        local.unlink()

    # When it is read
    # Then every row comes back once
    assert Counter(read_all(s3, uri, batch_rows=333)) == expected(rows)


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_empty_report_yields_nothing(s3: Any, fmt: str) -> None:
    # Given a report of a bucket without objects
    uri = write(s3, [], fmt)

    # When it is read
    # Then there is nothing, and no error
    assert read_all(s3, uri) == []


@pytest.mark.parametrize("fmt", FORMATS)
def test_streamed_report_of_many_files_reads_back(s3: Any, fmt: str) -> None:
    # Given a report written from a generator, 250 rows a file, 100 a group
    def rows() -> Iterator[Row]:
        for i in range(1234):
            yield row(f"v1/video/cam-001/{i:06d}.mp4", size=i)

    uri = write_inventory_stream(
        s3,
        dest_bucket=DEST,
        prefix=PREFIX,
        source_bucket=SOURCE,
        config_id=CONFIG,
        objects=rows(),
        fmt=fmt,
        created=CREATED,
        rows_per_file=250,
        rows_per_group=100,
    )

    # When it is read
    manifest = read_manifest(s3, uri)

    # Then it has ceil(1234 / 250) files and all rows
    assert len(manifest.files) == 5
    assert Counter(iter_objects(s3, manifest)) == expected(list(rows()))


@pytest.mark.parametrize("fmt", FORMATS)
def test_batches_are_bounded_and_hold_the_same_rows_as_objects(s3: Any, fmt: str) -> None:
    # Given a report of 1000 rows in 2 files
    rows = [row(f"v1/{i:04d}", size=i) for i in range(1000)]
    uri = write(s3, rows, fmt, files=2)
    manifest = read_manifest(s3, uri)

    # When it is read in column batches of at most 128 rows
    batches = list(iter_batches(s3, manifest, batch_rows=128))

    # Then no batch is larger, and together they are the rows
    assert all(0 < len(batch) <= 128 for batch in batches)
    assert sum(len(batch) for batch in batches) == 1000
    assert Counter(o for batch in batches for o in batch.objects()) == expected(rows)
    assert sorted(size for batch in batches for size in batch.sizes) == list(range(1000))


# --- versions ----------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_noncurrent_versions_and_delete_markers_are_skipped(s3: Any, fmt: str) -> None:
    # Given a report with versions: a current object, a noncurrent version,
    # and a key whose latest version is a delete marker
    rows = [
        ("v1/a.mp4", 10, "aa", MODIFIED, True, False),
        ("v1/a.mp4", 9, "a0", MODIFIED - timedelta(days=1), False, False),
        ("v1/gone.mp4", None, None, MODIFIED, True, True),
        ("v1/gone.mp4", 5, "g0", MODIFIED - timedelta(days=2), False, False),
    ]
    uri = write(s3, rows, fmt, versioned=True)

    # When it is read, by default and with noncurrent versions asked for
    current = read_all(s3, uri)
    everything = read_all(s3, uri, include_noncurrent=True)

    # Then by default only the current object is there; delete markers never are
    assert current == [InventoryObject("v1/a.mp4", 10, "aa", MODIFIED)]
    assert Counter(everything) == Counter(
        [
            InventoryObject("v1/a.mp4", 10, "aa", MODIFIED),
            InventoryObject("v1/a.mp4", 9, "a0", MODIFIED - timedelta(days=1), is_latest=False),
            InventoryObject("v1/gone.mp4", 5, "g0", MODIFIED - timedelta(days=2), is_latest=False),
        ]
    )


# --- the manifest ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fmt", "columns"),
    [
        ("CSV", ["Bucket", "Key", "Size", "LastModifiedDate", "ETag"]),
        ("Parquet", ["bucket", "key", "size", "last_modified_date", "e_tag"]),
        ("ORC", ["bucket", "key", "size", "last_modified_date", "e_tag"]),
    ],
)
def test_manifest_fields_are_parsed(s3: Any, fmt: str, columns: list[str]) -> None:
    # Given a report in the real layout
    uri = write(s3, [row("v1/x")], fmt, files=2)

    # When its manifest is read
    manifest = read_manifest(s3, uri)

    # Then the location, buckets (ARN → name), format, schema and time are as written
    assert uri == (f"s3://{DEST}/{PREFIX}/{SOURCE}/{CONFIG}/2026-11-30T01-00Z/manifest.json")
    assert isinstance(manifest, Manifest)
    assert manifest.uri == uri
    assert manifest.source_bucket == SOURCE
    assert manifest.destination_bucket == DEST
    assert manifest.file_format == fmt
    assert manifest.file_schema == columns
    assert manifest.creation == CREATED
    assert len(manifest.files) == 2
    for data_file in manifest.files:
        assert data_file.key.startswith(f"{PREFIX}/{SOURCE}/{CONFIG}/data/")
        assert data_file.size and data_file.size > 0
        assert data_file.md5 and len(data_file.md5) == 32


def test_aws_documented_schemas_with_every_optional_field_parse(s3: Any) -> None:
    # Given the fileSchema strings of the AWS documentation examples
    parquet = (
        "message s3.inventory { required binary bucket (UTF8); required binary key (UTF8); "
        "optional binary version_id (UTF8); optional boolean is_latest; optional boolean "
        "is_delete_marker;  optional int64 size;  optional int64 last_modified_date "
        "(TIMESTAMP_MILLIS);  optional binary e_tag (UTF8);  optional binary storage_class "
        "(UTF8);  optional boolean is_multipart_uploaded;  optional binary "
        "replication_status (UTF8);  optional binary encryption_status (UTF8);}"
    )
    orc_schema = (
        "struct<bucket:string,key:string,version_id:string,is_latest:boolean,"
        "is_delete_marker:boolean,size:bigint,last_modified_date:timestamp,e_tag:string,"
        "storage_class:string,is_multipart_uploaded:boolean,replication_status:string,"
        "encryption_status:string,object_lock_retain_until_date:timestamp,"
        "object_lock_mode:string,object_lock_legal_hold_status:string>"
    )
    uri = write(s3, [], "Parquet")

    # When the manifest carries them
    rewrite_manifest(s3, uri, lambda doc: doc.update(fileSchema=parquet))
    parquet_columns = read_manifest(s3, uri).file_schema
    rewrite_manifest(s3, uri, lambda doc: doc.update(fileSchema=orc_schema, fileFormat="ORC"))
    orc_columns = read_manifest(s3, uri).file_schema

    # Then every column is named, in order
    assert parquet_columns[:6] == [
        "bucket",
        "key",
        "version_id",
        "is_latest",
        "is_delete_marker",
        "size",
    ]
    assert parquet_columns[-1] == "encryption_status" and len(parquet_columns) == 12
    assert orc_columns[:2] == ["bucket", "key"] and len(orc_columns) == 15
    assert orc_columns[-1] == "object_lock_legal_hold_status"


def test_manifest_without_checksum_file_is_read(s3: Any) -> None:
    # Given a report published without manifest.checksum
    uri = write(s3, [row("v1/x")], "CSV", with_checksum=False)

    # When it is read
    # Then it is accepted
    assert [o.key for o in read_all(s3, uri)] == ["v1/x"]


def test_manifest_checksum_mismatch_is_refused(s3: Any) -> None:
    # Given a manifest changed after its checksum was written
    uri = write(s3, [row("v1/x")], "Parquet")
    rewrite_manifest(s3, uri, lambda doc: doc.update(version="tampered"), update_checksum=False)

    # When it is read
    # Then it is refused, naming the manifest and the checksum file
    with pytest.raises(InventoryError, match=r"manifest\.checksum") as caught:
        read_manifest(s3, uri)
    assert uri in str(caught.value)
    # and without verification it is read
    assert read_manifest(s3, uri, verify_checksum=False).version == "tampered"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda doc: doc.pop("sourceBucket"), "sourceBucket"),
        (lambda doc: doc.pop("fileSchema"), "fileSchema"),
        (lambda doc: doc.update(fileFormat="Avro"), "fileFormat"),
        (lambda doc: doc.update(creationTimestamp="yesterday"), "creationTimestamp"),
        (lambda doc: doc.update(files="none"), "files"),
        (lambda doc: doc["files"][0].update(size=-1), "size"),
        (lambda doc: doc["files"][0].update(MD5checksum="xyz"), "MD5checksum"),
        (lambda doc: doc.update(fileSchema="Key, Size"), "bucket"),
        (lambda doc: doc.update(destinationBucket="arn:aws:sqs:::q/x"), "destinationBucket"),
    ],
)
def test_malformed_manifest_fields_are_named(s3: Any, change: Any, field: str) -> None:
    # Given a manifest with one bad field
    uri = write(s3, [row("v1/x")], "CSV")
    rewrite_manifest(s3, uri, change)

    # When it is read
    # Then the error names the field
    with pytest.raises(InventoryError, match=field):
        read_manifest(s3, uri)


def test_manifest_that_is_not_json_is_refused(s3: Any) -> None:
    # Given a manifest.json that is not JSON
    key = f"{PREFIX}/{SOURCE}/{CONFIG}/2026-11-30T01-00Z/manifest.json"
    s3.put_object(Bucket=DEST, Key=key, Body=b"<html>")

    # When it is read
    # Then it is refused
    with pytest.raises(InventoryError, match="not JSON"):
        read_manifest(s3, f"s3://{DEST}/{key}")


def test_missing_manifest_is_an_inventory_error(s3: Any) -> None:
    # Given no manifest at the URI
    uri = f"s3://{DEST}/nothing/manifest.json"

    # When it is read
    # Then the error names it
    with pytest.raises(InventoryError, match=r"nothing/manifest\.json"):
        read_manifest(s3, uri)


def test_report_of_another_source_bucket_is_refused_when_a_bucket_is_expected(s3: Any) -> None:
    # Given a report of another bucket
    uri = write(s3, [row("v1/x")], "CSV", source_bucket="someone-elses-bucket")

    # When it is read expecting the segment bucket
    # Then it is refused
    with pytest.raises(InventoryError, match="someone-elses-bucket"):
        read_manifest(s3, uri, expect_source_bucket=SOURCE)
    assert read_manifest(s3, uri).source_bucket == "someone-elses-bucket"


# --- data file verification --------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_data_file_size_mismatch_names_the_file(s3: Any, fmt: str) -> None:
    # Given a report whose second data file grew after the manifest was written
    uri = write(s3, [row(f"v1/{i}") for i in range(10)], fmt, files=2)
    bad = data_keys(s3, uri)[1]
    replace_object(s3, DEST, bad, lambda data: data + b"\0")

    # When it is read
    # Then the error names the file and the sizes
    with pytest.raises(InventoryError, match="bytes, the manifest says") as caught:
        read_all(s3, uri)
    assert bad in str(caught.value)


@pytest.mark.parametrize("fmt", FORMATS)
def test_data_file_md5_mismatch_names_the_file_and_yields_none_of_its_rows(
    s3: Any, fmt: str
) -> None:
    # Given a single-file report with one byte of its data file changed (same size)
    uri = write(s3, [row(f"v1/{i}") for i in range(10)], fmt)
    (bad,) = data_keys(s3, uri)
    replace_object(s3, DEST, bad, lambda data: data[:-1] + bytes([data[-1] ^ 0xFF]))

    # When it is read
    seen: list[InventoryObject] = []
    with pytest.raises(InventoryError, match="MD5") as caught:
        for obj in iter_objects(s3, read_manifest(s3, uri)):
            seen.append(obj)

    # Then the error names the file, and no row of it was yielded
    assert bad in str(caught.value)
    assert seen == []


def test_missing_data_file_is_an_inventory_error(s3: Any) -> None:
    # Given a manifest listing a data file that is not there
    uri = write(s3, [row("v1/x")], "Parquet")
    (gone,) = data_keys(s3, uri)
    s3.delete_object(Bucket=DEST, Key=gone)

    # When it is read
    # Then the error names the file
    with pytest.raises(InventoryError, match=gone):
        read_all(s3, uri)


def test_data_files_without_size_or_md5_are_read_unverified(s3: Any) -> None:
    # Given a manifest whose files[] give only keys
    rows = [row(f"v1/{i}") for i in range(5)]
    uri = write(s3, rows, "ORC")

    def strip(doc: dict[str, Any]) -> None:
        doc["files"] = [{"key": f["key"]} for f in doc["files"]]

    rewrite_manifest(s3, uri, strip)

    # When it is read
    # Then the rows are all there
    assert Counter(read_all(s3, uri)) == expected(rows)


@pytest.mark.parametrize("fmt", FORMATS)
def test_rows_of_another_bucket_are_refused(s3: Any, fmt: str) -> None:
    # Given a report whose rows name another bucket than its sourceBucket
    uri = write(s3, [row("v1/x"), row("v1/y")], fmt, row_bucket="another-bucket")

    # When it is read
    # Then it is refused, naming the file and the bucket
    with pytest.raises(InventoryError, match="another-bucket") as caught:
        read_all(s3, uri)
    assert data_keys(s3, uri)[0] in str(caught.value)


@pytest.mark.parametrize("fmt", FORMATS)
def test_temporary_files_are_removed_even_when_reading_stops_early(
    s3: Any, fmt: str, tmp_path: Path
) -> None:
    # Given a report of two data files
    uri = write(s3, [row(f"v1/{i}") for i in range(20)], fmt, files=2)
    manifest = read_manifest(s3, uri)

    # When it is read to the end, and once more abandoned after one row
    assert len(list(iter_objects(s3, manifest, tmp_dir=str(tmp_path)))) == 20
    assert os.listdir(tmp_path) == []
    rows = iter_objects(s3, manifest, tmp_dir=str(tmp_path))
    next(rows)
    assert len(os.listdir(tmp_path)) == 1
    rows.close()

    # Then no temporary file is left behind
    assert os.listdir(tmp_path) == []


def test_csv_row_with_the_wrong_number_of_fields_names_file_and_row(s3: Any) -> None:
    # Given a CSV data file with a short second row, and a manifest made to match it
    uri = write(s3, [row("v1/x")], "CSV")
    (data_key,) = data_keys(s3, uri)
    lines = [f'"{SOURCE}","v1%2Fx","1","2026-11-30T00:00:00.000Z","e"', f'"{SOURCE}","v1%2Fy"']
    body = gzip.compress("\n".join(lines).encode() + b"\n")
    s3.put_object(Bucket=DEST, Key=data_key, Body=body)
    rewrite_manifest(s3, uri, lambda doc: doc["files"][0].update(size=len(body), MD5checksum=None))

    # When it is read
    # Then the error names the file and row 2
    with pytest.raises(InventoryError, match=r"row 2: 2 fields") as caught:
        read_all(s3, uri)
    assert data_key in str(caught.value)


# --- finding the newest report -----------------------------------------------------------


def test_find_latest_manifest_picks_the_newest_report_of_its_configuration(s3: Any) -> None:
    # Given three reports of the configuration, a newer one of another configuration,
    # and a newer folder whose manifest is not written yet
    uris = [
        write(s3, [row("v1/x")], "Parquet", created=CREATED + timedelta(days=day))
        for day in (1, 0, 2)
    ]
    write(
        s3, [row("v1/x")], "Parquet", config_id="other-config", created=CREATED + timedelta(days=5)
    )
    write(
        s3,
        [row("v1/x")],
        "Parquet",
        source_bucket="other-source",
        created=CREATED + timedelta(days=6),
    )
    s3.put_object(
        Bucket=DEST,
        Key=f"{PREFIX}/{SOURCE}/{CONFIG}/2026-12-09T01-00Z/manifest.checksum",
        Body=b"x",
    )
    destination = destination_uri(DEST, PREFIX, SOURCE, CONFIG)

    # When the newest report is looked for, with and without the trailing slash
    found = find_latest_manifest(s3, destination)
    found_without_slash = find_latest_manifest(s3, destination.rstrip("/"))

    # Then it is the one created last of that configuration
    assert found == uris[2] == found_without_slash
    assert "2026-12-02T01-00Z" in found


def test_find_latest_manifest_without_any_report_is_an_inventory_error(s3: Any) -> None:
    # Given a destination with nothing under it (and data/ and hive/ folders only)
    s3.put_object(Bucket=DEST, Key=f"{PREFIX}/{SOURCE}/{CONFIG}/data/x.csv.gz", Body=b"")
    s3.put_object(
        Bucket=DEST,
        Key=f"{PREFIX}/{SOURCE}/{CONFIG}/hive/dt=2026-11-30-01-00/symlink.txt",
        Body=b"",
    )

    # When the newest report is looked for
    # Then the error says where it looked
    with pytest.raises(InventoryError, match="no inventory report under"):
        find_latest_manifest(s3, destination_uri(DEST, PREFIX, SOURCE, CONFIG))


def test_find_latest_manifest_of_a_missing_bucket_is_an_inventory_error(s3: Any) -> None:
    with pytest.raises(InventoryError):
        find_latest_manifest(s3, "s3://no-such-bucket/inventory/a/b/")


@pytest.mark.parametrize(
    ("uri", "parts"),
    [
        ("s3://bucket/a/b/manifest.json", ("bucket", "a/b/manifest.json")),
        ("s3://bucket/", ("bucket", "")),
        ("s3://bucket", ("bucket", "")),
    ],
)
def test_parse_s3_uri(uri: str, parts: tuple[str, str]) -> None:
    assert parse_s3_uri(uri) == parts


@pytest.mark.parametrize("uri", ["bucket/key", "https://bucket/key", "s3:///key", ""])
def test_parse_s3_uri_refuses_what_is_not_an_s3_uri(uri: str) -> None:
    with pytest.raises(InventoryError):
        parse_s3_uri(uri)


def test_manifest_documented_by_aws_is_read_as_is(s3: Any) -> None:
    # Given the CSV manifest example of the AWS documentation, pointing at a real file
    uri = write(s3, [row("v1/x")], "CSV", versioned=False)
    (data_file,) = read_manifest(s3, uri).files
    document = {
        "sourceBucket": SOURCE,
        "destinationBucket": f"arn:aws:s3:::{DEST}",
        "version": "2016-11-30",
        "creationTimestamp": "1514944800000",
        "fileFormat": "CSV",
        "fileSchema": file_schema("CSV"),
        "files": [{"key": data_file.key, "size": data_file.size, "MD5checksum": data_file.md5}],
    }
    key = f"{PREFIX}/{SOURCE}/{CONFIG}/2018-01-03T02-00Z/manifest.json"
    s3.put_object(Bucket=DEST, Key=key, Body=json.dumps(document).encode())

    # When it is read
    manifest = read_manifest(s3, f"s3://{DEST}/{key}")

    # Then its creation is the epoch milliseconds, and its rows are read
    assert manifest.creation == datetime(2018, 1, 3, 2, 0, tzinfo=UTC)
    assert [o.key for o in iter_objects(s3, manifest)] == ["v1/x"]


# --- property: exactly the written rows --------------------------------------------------

_keys = st.text(alphabet=st.characters(exclude_categories=["Cs"]), min_size=1, max_size=40)
_rows = st.lists(
    st.tuples(
        _keys,
        st.one_of(st.none(), st.integers(min_value=0, max_value=5 * 2**40)),
        st.one_of(st.none(), st.text(alphabet="0123456789abcdef-", min_size=1, max_size=34)),
        st.one_of(
            st.none(),
            st.datetimes(
                min_value=datetime(2000, 1, 1),
                max_value=datetime(2100, 1, 1),
                timezones=st.just(UTC),
            ).map(lambda moment: moment.replace(microsecond=moment.microsecond // 1000 * 1000)),
        ),
    ),
    max_size=60,
)


@pytest.mark.parametrize("fmt", FORMATS)
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=_rows, files=st.integers(min_value=1, max_value=3))
def test_property_iter_objects_returns_exactly_the_written_rows(
    fmt: str, rows: list[Row], files: int
) -> None:
    # Given any rows (keys of any characters, duplicates included) in any number of files
    with mock_aws():
        client = boto3.client("s3", region_name="us-east-1")
        client.create_bucket(Bucket=DEST)
        uri = write(client, rows, fmt, files=files, rows_per_group=7)

        # When the report is read
        objects = list(iter_objects(client, read_manifest(client, uri), batch_rows=5))

    # Then the rows read are the rows written, as a multiset
    assert Counter(objects) == expected(rows)


@pytest.mark.parametrize("fmt", FORMATS)
def test_damaged_data_file_without_checksum_names_the_file(s3: Any, fmt: str) -> None:
    # Given a data file replaced by garbage, in a manifest without size or MD5 for it
    uri = write(s3, [row("v1/x")], fmt)
    (data_key,) = data_keys(s3, uri)
    s3.put_object(Bucket=DEST, Key=data_key, Body=b"\x1f\x8bthis is not a report" * 10)
    rewrite_manifest(s3, uri, lambda doc: doc.update(files=[{"key": data_key}]))

    # When it is read
    # Then the error is an InventoryError naming the file
    with pytest.raises(InventoryError) as caught:
        read_all(s3, uri)
    assert data_key in str(caught.value)
