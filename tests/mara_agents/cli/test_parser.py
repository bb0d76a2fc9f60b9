"""`CommandParser`: one-line errors with status 2, and help that states defaults once."""

import pytest

from mara_agents.cli.parser import CommandParser, count, whole


def test_an_error_is_one_line_with_status_2_even_from_a_multiline_message(capsys):
    parser = CommandParser(prog="coreenv demo")
    with pytest.raises(SystemExit) as exit_info:
        parser.error("no bank at x.csv:\n   write one with bank_to_csv")
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err == "coreenv demo: error: no bank at x.csv: write one with bank_to_csv\n"


def test_argparse_own_errors_are_one_line_too(capsys):
    parser = CommandParser(prog="coreenv demo")
    parser.add_argument("--mode", choices=["a", "b"])
    with pytest.raises(SystemExit) as exit_info:
        parser.parse_args(["--mode", "c"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("coreenv demo: error: argument --mode: invalid choice: 'c'")
    assert err.count("\n") == 1  # no usage block before it


def test_help_states_a_default_once_and_never_none():
    parser = CommandParser(prog="coreenv demo")
    parser.add_argument("--episodes", type=int, default=3, help="episodes per cell")
    parser.add_argument("--zero", type=int, default=0, help="a falsy value, still shown")
    parser.add_argument("--out", default=None, help="results folder")
    parser.add_argument("--lr", type=float, default=None, help="default: the algorithm's")
    parser.add_argument("--work", default="w", help="folder (default: results/<name>)")
    parser.add_argument("--strict", action="store_true", help="stop at the first error")
    text = " ".join(parser.format_help().split())
    assert "episodes per cell (default: 3)" in text
    assert "a falsy value, still shown (default: 0)" in text
    assert "results folder --lr" in text and "(default: None)" not in text
    assert "default: the algorithm's --work" in text
    assert "(default: results/<name>) --strict" in text and "(default: False)" not in text


@pytest.mark.parametrize("text", ["0", "-3", "2.5", "many", "True"])
def test_a_count_option_refuses_what_is_no_int_of_at_least_one(text, capsys):
    parser = CommandParser(prog="coreenv demo")
    parser.add_argument("--episodes", type=count, default=3)
    with pytest.raises(SystemExit):
        parser.parse_args(["--episodes", text])
    err = capsys.readouterr().err
    assert f"argument --episodes: a count must be an int >= 1, got {text!r}" in err or (
        f"argument --episodes: a count must be an int >= 1, got {int(text)}" in err
    )


def test_a_count_option_reads_an_int():
    parser = CommandParser(prog="coreenv demo")
    parser.add_argument("--episodes", type=count, default=3)
    assert parser.parse_args(["--episodes", "7"]).episodes == 7


@pytest.mark.parametrize(("text", "shown"), [("-1", "-1"), ("2.5", "'2.5'"), ("none", "'none'")])
def test_a_whole_option_takes_zero_and_refuses_what_is_no_int_of_at_least_zero(text, shown, capsys):
    parser = CommandParser(prog="coreenv demo")
    parser.add_argument("--finished", type=whole, nargs="+")
    assert parser.parse_args(["--finished", "0", "3"]).finished == [0, 3]
    with pytest.raises(SystemExit):
        parser.parse_args(["--finished", text])
    err = capsys.readouterr().err
    assert f"argument --finished: a count must be an int >= 0, got {shown}." in err
