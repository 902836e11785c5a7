"""The class link's address (core/app/class_address.py): phones get an address they can open, or the teacher is
told why there is none."""
from core.app.class_address import Reach, class_address, network_address


def lan() -> str:
    return "192.168.1.20"


def test_the_teachers_own_network_address_or_name_is_kept():
    for url in ("http://192.168.1.20:8501/train", "https://studio.school.example/train?present=1"):
        address = class_address(url, "0.0.0.0", lan)
        assert address.reach is Reach.AS_OPENED and address.phones_can_open
        assert url.startswith(address.base) and "/train" not in address.base


def test_localhost_on_a_server_listening_everywhere_becomes_this_computers_network_address():
    for url in ("http://localhost:8501/", "http://127.0.0.1:8501/train", "http://[::1]:8501/"):
        for listening in ("", "0.0.0.0", "::", None):
            address = class_address(url, listening, lan)
            assert (address.base, address.reach) == ("http://192.168.1.20:8501", Reach.NETWORK), (url, listening)
    assert class_address("http://localhost:8501/", "0.0.0.0", lambda: "fd00::5").base == "http://[fd00::5]:8501"


def test_a_server_on_this_computer_only_or_without_a_network_says_so_and_keeps_the_address():
    for listening in ("127.0.0.1", "localhost", "::1"):
        address = class_address("http://127.0.0.1:8501/", listening, lan)
        assert (address.base, address.reach) == ("http://127.0.0.1:8501", Reach.THIS_COMPUTER)
        assert not address.phones_can_open
    address = class_address("http://localhost:8501/", "0.0.0.0", lambda: None)
    assert address.reach is Reach.NO_NETWORK and not address.phones_can_open


def test_a_server_bound_to_one_network_address_gives_that_address():
    address = class_address("http://localhost:8501/", "10.0.0.7", lan)
    assert (address.base, address.reach) == ("http://10.0.0.7:8501", Reach.NETWORK)


def test_this_computers_network_address_is_never_a_loopback_one():
    found = network_address()
    assert found is None or not (found.startswith("127.") or found in ("::1", "0.0.0.0")), found
