from metrics.engine.text_table import text_table


def test_columns_are_as_wide_as_their_widest_cell_with_a_rule_under_the_header():
    assert text_table([["name", "n"], ["alice", "12"], ["bo", ""]]) == [
        "name   n",
        "-----  --",
        "alice  12",
        "bo",
    ]
