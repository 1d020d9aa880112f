"""Typical Byzer `select`s (the spike's 26 and the forms the issue names), each run on Spark once
for its golden answer (generate.py) and on every engine by the tests.

`ordered`: the snippet's row order is part of its answer (else rows are compared sorted).
"""
from __future__ import annotations

SNIPPETS: list[tuple[str, str, bool]] = [
    ("split_index", "select id, split(name, ',')[0] as first_name, split(name, ',')[1] as last_name from t", False),
    ("explode_select", "select id, explode(split(tags, ',')) as tag from t", False),
    ("lateral_view", "select id, tag from t lateral view explode(split(tags, ',')) tt as tag", False),
    ("date_format_group", "select date_format(event_time, 'yyyy-MM-dd') as d, count(*) as n from t "
                          "group by date_format(event_time, 'yyyy-MM-dd')", False),
    ("date_format_letters", "select id, date_format(event_time, 'yyyy/MM/dd HH:mm:ss EEE MMM') as d, "
                            "date_format(event_time, 'yy-M-d h a') as e from t", False),
    ("cast_column", "select id, cast(id as string) as sid, cast(amount as int) as a, "
                    "cast(amount as bigint) as b from t", False),
    ("cast_literals", "select cast(38.9 as int) as a, cast(-38.9 as int) as b, cast('38.9' as int) as c, "
                      "cast(' 12 ' as int) as d, cast('x' as int) as e, cast(2.5 as bigint) as f", False),
    ("row_number_top2", "select * from (select id, category, amount, row_number() over "
                        "(partition by category order by amount desc, id) as rn from t) x where rn <= 2", False),
    ("case_when", "select case when amount > 50 then 'high' when amount > 10 then 'mid' else 'low' end as lvl, "
                  "count(*) as n from t group by case when amount > 50 then 'high' when amount > 10 then 'mid' "
                  "else 'low' end", False),
    ("cte", "with a as (select category, sum(amount) as s from t group by category) "
            "select * from a where s > 0 order by s desc limit 3", True),
    ("concat_ws", "select id, concat_ws('-', category, name) as k from t", False),
    ("concat_null", "select id, concat(name, '-', category) as k from t", False),
    ("from_unixtime", "select id, from_unixtime(ts, 'yyyy-MM-dd HH:mm:ss') as t1, from_unixtime(ts) as t2 from t",
     False),
    ("regexp_extract", "select id, regexp_extract(url, 'id=(\\\\d+)', 1) as rid from t", False),
    ("from_json_field", "select id, from_json(payload, 'k INT, v STRING').v as v from t", False),
    ("from_json_struct", "select id, from_json(payload, 'k INT, v STRING') as j from t", False),
    ("get_json_object", "select id, get_json_object(payload, '$.k') as k from t", False),
    ("collect_list_size", "select category, size(collect_list(id)) as n from t group by category", False),
    ("collect_set_sorted", "select category, sort_array(collect_set(user_id)) as us from t group by category",
     False),
    ("if_nvl", "select id, if(amount > 50, 1, 0) as hi, nvl(name, 'x') as nm from t", False),
    ("group_by_ordinal", "select category, count(1) as n from t group by 1 order by 2 desc, 1", True),
    ("row_number_global", "select id, row_number() over (order by amount desc, id) as rn from t "
                          "order by rn limit 3", True),
    ("lag", "select id, lag(amount) over (partition by category order by id) as prev from t", False),
    ("count_distinct", "select count(distinct category) as n from t", False),
    ("union_all", "select category from t where amount > 90 union all select category from t where amount < 5",
     False),
    ("in_subquery", "select id from t where user_id in (select user_id from t where amount > 99)", False),
    ("left_semi_join", "select a.id from t a left semi join t b on a.user_id = b.user_id and b.amount > 95",
     False),
    ("rollup", "select category, user_id, sum(amount) as s from t group by rollup(category, user_id)", False),
    ("substr", "select id, substr(name, 1, 3) as p, substr(name, 0, 2) as q, substr(name, -3) as r, "
               "substring(name, 2) as s, substr(name, -5, 2) as u from t", False),
    ("instr", "select id, instr(name, ',') as p from t", False),
    ("datediff_to_date", "select id, datediff(to_date('2024-12-31'), to_date(event_time)) as d from t", False),
    ("to_date_pattern", "select id, to_date(event_time, 'yyyy-MM-dd HH:mm:ss') as d from t", False),
    ("unix_timestamp", "select id, unix_timestamp(event_time, 'yyyy-MM-dd HH:mm:ss') as u from t", False),
    ("round_floor_ceil", "select id, round(amount, 1) as r, round(amount) as r0, floor(amount) as f, "
                         "ceil(amount) as c from t", False),
    ("sum_avg", "select category, sum(amount) as s, avg(amount) as a, min(id) as lo, max(id) as hi, "
                "count(amount) as n from t group by category", False),
    ("running_sum", "select id, sum(amount) over (partition by category order by id rows between "
                    "unbounded preceding and current row) as run from t", False),
    ("date_format_quarter", "select id, date_format(event_time, 'yyyy QQQ') as q from t", False),
    ("date_format_of_from_unixtime", "select id, date_format(from_unixtime(ts), 'yyyy-MM Q') as m, "
                                     "date_format(from_unixtime(ts, 'yyyy-MM-dd'), 'MM/dd HH') as d from t", False),
]
