#!/usr/bin/env bash
# The second hardening round's tests run against the code the round's attack run found the
# findings on (commit 046eb56), to show that each of them fails there: a test that passes on
# the old code would not catch its finding.
#
#   bench/abuse-before-38.sh          (about 10 minutes: a debug build of the old tree)
#
# bench/abuse-before-38.patch ports today's tests to the old tree without changing its
# behaviour: it carries today's test files (tests/attacks.rs, tests/rfc9111.rs, tests/steer.rs,
# tests/common/mod.rs and the cdnlab-testkit crate; the DHT test and its helpers as
# tests/round2_dht.rs; the CLI's two memory tests as tests/round2.rs), gives the old crate
# today's names (`serve` for `server`, `serve::metrics`, `dht::ring`, `EdgeConfig::in_front_of`,
# the library's `steering::share_order`, `Origin::report_bytes`), adds the round's new
# configuration fields as fields the old servers ignore, and adds `session.rs` (today's token
# minting, which the old edges never check). Expected: every test
# named below FAILS; the script prints each and exits 1 if one passes.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tmp="$(mktemp -d)"
old="$tmp/before"
trap 'git -C "$root" worktree remove --force "$old" >/dev/null 2>&1; rm -rf "$tmp"' EXIT
git -C "$root" worktree add --detach "$old" 046eb56 >/dev/null
git -C "$old" apply "$root/bench/abuse-before-38.patch"
export CARGO_TARGET_DIR="$root/target/before-38"
tests=(
  # item 1: slots under attack
  "cdnlab-live --test attacks never_readers_from_many_addresses_cannot_hold_the_slots"
  "cdnlab-live --test attacks readers_below_the_minimum_rate_make_room"
  "cdnlab-live --test attacks slowloris_from_many_addresses_cannot_hold_the_slots"
  # item 2: streaming misses with a budget
  "cdnlab-live --test attacks a_miss_streams_and_later_requests_join_it"
  "cdnlab-live --test attacks a_reader_whose_body_was_evicted_gets_the_rest_from_the_origin"
  "cdnlab-live --test attacks objects_above_the_largest_size_pass_through"
  "cdnlab-cli --test round2 edge_memory_stays_within_its_budget_under_miss_attacks"
  # item 3: recovery
  "cdnlab-live --test steer a_restarted_edge_gets_its_thresholds_within_two_windows"
  "cdnlab-live --test steer an_edge_without_thresholds_asks_and_is_not_steered_to"
  "cdnlab-live --test round2_dht a_killed_home_owner_is_served_at_the_next_request"
  # item 4: sessions
  "cdnlab-live --test steer sessions_cannot_be_made_up_moved_or_shared"
  "cdnlab-live --test steer a_flood_of_play_forgets_no_session_in_use"
  "cdnlab-live --test steer a_flooding_population_cannot_take_a_share_in_use"
  # item 5: reports
  "cdnlab-cli --test round2 a_player_report_bomb_stays_bounded"
  "cdnlab-live --test attacks player_reports_from_one_address_are_rate_limited"
  # item 6: content steering
  "cdnlab-live --test steer dash_lists_are_parsed_and_no_order_is_empty"
  # item 7: RFC 9111
  "cdnlab-live --test rfc9111 private_no_store_and_set_cookie_are_never_shared"
  "cdnlab-live --test rfc9111 a_response_setting_a_cookie_is_not_stored"
  "cdnlab-live --test rfc9111 max_age_and_s_maxage_then_validation_by_entity_tag"
  "cdnlab-live --test rfc9111 expires_then_validation_by_date"
  "cdnlab-live --test rfc9111 vary_selects_and_vary_star_is_not_stored"
  "cdnlab-live --test rfc9111 stale_if_error_serves_a_stale_response_when_the_origin_fails"
  "cdnlab-live --test rfc9111 no_cache_is_validated_every_time"
  # item 8: the minor two
  "cdnlab-live --test attacks a_dht_file_the_origin_lacks_is_404"
  "cdnlab-live --test attacks connections_during_the_drain_are_refused"
)
(cd "$old" && cargo build -q -p cdnlab-live --test attacks --test rfc9111 --test steer \
  --test round2_dht && cargo build -q -p cdnlab-cli --test round2) 2>&1 | grep -v "^warning" | tail -3
passed=0
for t in "${tests[@]}"; do
  set -- $t
  out="$(cd "$old" && timeout 300 cargo test -q -p "$1" "$2" "$3" "$4" -- --exact 2>&1)"
  if grep -q "test result: ok. 1 passed" <<<"$out"; then
    echo "passes  $4 (does not catch its finding)"
    passed=$((passed + 1))
  else
    # The assertion's message, and its two sides when it compares.
    why="$(grep -a -A3 -E "panicked at|^error" <<<"$out" | grep -a -v -E "panicked at|^--|^note:" |
      head -3 | tr -s ' ' | tr '\n' ' ' | cut -c1-200)"
    echo "FAILED  $4: $why"
  fi
done
if [ "$passed" -ne 0 ]; then
  echo "$passed of ${#tests[@]} round-two tests pass on the old code" >&2
  exit 1
fi
echo "all ${#tests[@]} round-two tests fail on the code from before the round (046eb56)"
