"""Two servers on one machine never share a sandbox id or group (issue 29, item 4).

Every server used to take the default base 300000, so one server's Ray zone was another's and
its members group could write the other's lake. Now each data dir holds a block of its own in
the machine's registry; these tests use a registry of their own, and then the real one through
the ids two walled servers would use.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from console.cluster import identity


def test_each_data_dir_holds_its_own_block_and_keeps_it(tmp_path: Path) -> None:
    registry = tmp_path / "registry"
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    first = identity.claim_block(str(a), registry)
    second = identity.claim_block(str(b), registry)
    assert first != second
    assert identity.claim_block(str(a), registry) == first  # a restart gets its ids back
    shutil.rmtree(a)
    c = tmp_path / "c"
    c.mkdir()
    assert identity.claim_block(str(c), registry) == first  # a deleted data dir's block is reused
    assert identity.claim_block(str(b), registry) == second


def test_two_servers_ids_and_groups_do_not_meet(tmp_path: Path) -> None:
    one = {"DATA_DIR": str(tmp_path / "one")}
    two = {"DATA_DIR": str(tmp_path / "two")}
    for cfg in (one, two):
        Path(cfg["DATA_DIR"]).mkdir()
    ids_one = {identity.ray_zone(one).uid, identity.holder(one).uid, identity.members_gid(one),
               identity.handoff_gid(one)}
    ids_two = {identity.ray_zone(two).uid, identity.holder(two).uid, identity.members_gid(two),
               identity.handoff_gid(two)}
    assert not ids_one & ids_two
    pool_one = range(identity.base(one) + identity.POOL_OFFSET, identity.base(one) + identity.POOL_OFFSET
                     + identity.POOL_SIZE)
    assert identity.base(two) not in pool_one and identity.base(two) + identity.POOL_SIZE not in pool_one
    assert identity.base({**one, "SANDBOX_UID_BASE": 500000}) == 500000  # set by hand: as given


def test_a_lease_released_twice_closes_only_its_own_descriptor(tmp_path: Path) -> None:
    import os

    lease = identity.lease_session({"SANDBOX_UID_BASE": 500000}, tmp_path, prefer="s1")
    number = lease.lease_fd
    assert number is not None
    lease.release()
    # The freed number goes to the next file this process opens (another thread's, in a server).
    other = os.open(tmp_path / "other", os.O_CREAT | os.O_RDWR)
    try:
        assert other == number
        lease.release()  # before: closed `other`, the file now on that number
        os.fstat(other)
    finally:
        os.close(other)
    again = identity.lease_session({"SANDBOX_UID_BASE": 500000}, tmp_path, prefer="s1")
    assert again.uid == lease.uid  # given back
    again.release()
