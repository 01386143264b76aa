"""Source mutation: a small, realistic bug planted in rmpeer's source, so a test shows that it
fails when the code it guards is broken (the replay mutants, planted at run time, are
tests/mutants.py).

Two ways in:
- `mutated(module, old, new)`: the module rebuilt from its own source with one change, for a
  test that calls the broken copy itself. The copy is a fresh module object under the
  original's name and package (its relative imports resolve to the real package); the real
  module is never touched.
- MUTANTS, run by the harness: each is applied to a copy of the checkout (the file itself
  edited), and the tests named as its killers run there and must fail.

      python tests/source_mutation.py                # every mutant, one at a time
      python tests/source_mutation.py NAME [NAME...]  # those
      python tests/source_mutation.py --list

  It says KILLED or SURVIVED for each, with the killing test's failure, and exits 1 when one
  survived. CI checks that every mutant still applies to the source and names existing tests
  (tests/system/test_source_mutants.py), and runs a few through the harness."""

from __future__ import annotations

import importlib
import inspect
import os
import shutil
import subprocess
import sys
import tempfile
import time
import types
from dataclasses import dataclass
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent


def mutated(module_name: str, old: str, new: str) -> types.ModuleType:
    """`module_name` compiled from its source with `old` replaced by `new` (exactly once)."""
    real = importlib.import_module(module_name)
    source = inspect.getsource(real)
    assert source.count(old) == 1, f"the mutation's anchor {old!r} is not in {module_name} exactly once"
    copy = types.ModuleType(module_name)
    copy.__file__, copy.__package__ = real.__file__, real.__package__
    exec(compile(source.replace(old, new), f"{real.__file__} (mutated)", "exec"), copy.__dict__)
    return copy


@dataclass(frozen=True)
class Mutant:
    bug: str            # the bug, in words
    path: str           # the file changed, from the checkout's root
    old: str            # found exactly once in it
    new: str
    kills: tuple        # pytest node ids (from the checkout's root): at least one must fail
    # (old, new) for the same bug in another helper's version of the file, being merged at
    # the same time: the first pair whose `old` is in the file exactly once is planted
    alt: tuple = ()

    def change(self, text: str) -> tuple[str, str] | None:
        return next(((o, n) for o, n in ((self.old, self.new), *self.alt) if text.count(o) == 1), None)


M = Mutant
# Issue 27's rows (1-16), then the ones found since. Each names the tests that kill it.
MUTANTS = {
    "progress-lines-raise-on-a-full-stdout": M(
        "certify's progress lines write to stdout unguarded, inside pytest's hooks", "rmpeer/cli/certify.py",
        '        self.say(f"\\033[31m{line}\\033[0m" if bad else line)',
        "        print(line, file=self.say.stream, flush=True)",
        ("tests/system/test_user_hunt.py::test_row[certify --replay > /dev/full: the verdict stands, one line on "
         "stderr, no pytest INTERNALERROR]",)),
    "parser-loads-the-fleet": M(
        "building the parser imports the fleet's implementation (every command pays for it)", "rmpeer/cli/fleet.py",
        "from rmpeer.cli.cards import add_options as add_card_options, passed_on\n",
        "from rmpeer.cli.cards import add_options as add_card_options, passed_on\nfrom rmpeer.fleet.node import main_node\n",
        ("tests/cli/test_parser.py::test_building_the_parser_loads_no_commands_implementation",)),
    "parser-error-exits-1": M(
        "an error while the parser is built escapes with Python's exit 1 (read as NOT CERTIFIED)", "rmpeer/cli/__init__.py",
        '        code = internal_error("rmpeer", exc)   # never Python\'s exit 1, which only the judge may say',
        "        raise",
        ("tests/cli/test_parser.py::test_an_error_while_the_parser_is_built_is_exit_5_never_pythons_1",)),
    "junit-forgets-the-cards": M(
        "JUnit leaves out which cards the verdict covers", "rmpeer/render/junit.py",
        "    return props + _cards(result)", "    return props",
        ("tests/render/test_selection_outputs.py::test_junit_names_the_selection_and_each_cards_verdict",
         "tests/render/test_selection_outputs.py::test_a_whole_host_has_no_selection_and_every_card_and_pair")),
    "collect-takes-any-sweeps-status": M(
        "collect reads a folder an earlier sweep left as this sweep's result", "rmpeer/fleet/collect.py",
        "            if o.state != ERROR and theirs != run_id and not _later(", "            if False and (",
        ("tests/system/test_shared_host_trust.py::test_collect_takes_only_this_sweeps_status",)),
    "deadline-forgets-what-is-owed": M(
        "a deadline ends fleet node before its status.json is written", "rmpeer/machine/deadline.py",
        "            for write in (self.on_deadline, *_BEFORE_EXIT):", "            for write in (self.on_deadline,):",
        ("tests/fleet/test_node.py::test_a_deadline_that_ends_the_node_still_leaves_its_status",)),
    "xid-allowance-not-consumed": M(
        "an allowance for a provoked Xid is never consumed", "rmpeer/judge/verdict.py",
        '                allowed.remove((card, x["xid"]))', "                pass",
        ("tests/judge/test_verdict.py::test_one_allowance_covers_one_provoked_xid",)),
    "boost-refusal-is-info": M(
        "a boost that RM refused becomes INFO, not DEGRADE", "rmpeer/judge/verdict.py",
        'f"RM refused it: {status}", DEGRADE))', 'f"RM refused it: {status}", INFO))',
        ("tests/judge/test_verdict.py::test_a_boost_rm_refused_degrades",)),
    "floor-at-or-below": M(
        "a figure exactly on the floor fails it", "rmpeer/judge/floors.py",
        '        if f["gbps"] < floor:', '        if f["gbps"] <= floor:',
        ("tests/judge/test_verdict.py::test_a_figure_on_the_floor_is_a_warning_not_a_failure",)),
    "compare-reports-last-word": M(
        "the byte comparison reports the last differing word, not the first", "rmpeer/traffic/bytecheck.py",
        "(at + int(neq.argmax()) if count else None)", "(at + neq.size - 1 - int(neq[::-1].argmax()) if count else None)",
        ("tests/traffic/test_bytecheck.py::test_two_flipped_words_report_the_first",)),
    # a reading RM did not answer is no fact (Card.unread, CallRecord.refused)
    "refused-pce-mask-reads-as-no-pces": M(
        "a PCE mask RM refused is taken for 0 PCEs, the floor check DEGRADED on a statement RM never made",
        "rmpeer/judge/derived.py", "        if kind is not None and refused:", "        if False:",
        ("tests/judge/test_derived.py::test_a_pce_mask_rm_refused_is_no_floor_check_never_no_pces",)),
    "refused-pce-mask-not-kept": M(
        "rm.host forgets that RM refused a PCE mask", "rmpeer/rm/host.py",
        '                card.unread[f"ce_pces[{lce}]"] = f"NV2080_CTRL_CMD_CE_GET_CE_PCE_MASK: {refused}"',
        "                pass",
        ("tests/judge/test_derived.py::test_a_pce_mask_rm_refused_is_no_floor_check_never_no_pces",)),
    "unread-floor-check-degrades": M(
        "a floor that could not be derived for RM's refusal is a DEGRADE, as if the card lacked something",
        "rmpeer/judge/floors.py", "UNFINISHED if m in derived.unread else DEGRADE", "DEGRADE",
        ("tests/judge/test_derived.py::test_a_pce_mask_rm_refused_is_no_floor_check_never_no_pces",)),
    "unanswered-free-memory-judged": M(
        "free video memory RM did not answer is judged as a reading", "rmpeer/judge/sharedhost.py",
        "    if unanswered:      #", "    if False:      #",
        ("tests/judge/test_sharedhost.py::test_free_memory_rm_did_not_answer_is_no_reading_and_never_a_verdict",)),
    "unnamed-status-is-an-answer": M(
        "a nonzero RM status without a known name counts as answered", "rmpeer/shim/records.py",
        '            return self.status_name or f"status {self.status:#x}"', "            return self.status_name",
        ("tests/shim/test_records.py::test_a_call_is_refused_by_its_errno_or_any_nonzero_status",)),
    "fingerprint-missing-key-ignored": M(
        "a fingerprint key the certificate lacks is ignored", "rmpeer/judge/freshness.py",
        '        if key not in old:\n            out.append(f"the certificate records no {_NAMES.get(key, key)}")',
        "        if key not in old:\n            continue",
        ("tests/run/test_freshness.py::test_a_fingerprint_key_the_certificate_lacks_is_a_change",),
        alt=(('        if key not in old:\n            out.append(f"the certificate records no {name}")',
              "        if key not in old:\n            continue"),)),
    "lock-released-before-the-run": M(
        "the host lock is taken and released before the run, not held through it", "rmpeer/cli/certify.py",
        "    with HostLock(wait_s=spec.policies.wait_s) as lock:    # one run per host: BusyError (exit 6) "
        "after --wait\n        if lock.note:",
        "    with HostLock(wait_s=spec.policies.wait_s) as lock:\n        pass\n"
        "    with __import__('contextlib').nullcontext():\n        if lock.note:",
        ("tests/cli/test_certify_live_rules.py::test_the_lock_is_held_while_the_run_is_under_way",)),
    "passive-ignores-require-idle": M(
        "--require-idle is ignored in the passive tier", "rmpeer/run/execute.py",
        "    if spec.policies.require_idle and not spec.is_replay:", "    if False:",
        ("tests/cli/test_certify_live_rules.py::test_require_idle_refuses_a_busy_host_in_the_passive_tier",)),
    "hidden-processes-count-as-idle": M(
        "--require-idle takes the processes /proc hid from this user for idle even when RM refused its own list",
        "rmpeer/judge/sharedhost.py",
        '                 unknown=reading.get("unreadable", ()) if reading.get("rm_errors") else ())',
        "                 unknown=())",
        ("tests/judge/test_sharedhost.py::test_require_idle_of_one_reading_proves_idle_or_refuses",
         "tests/cli/test_certify_live_rules.py::test_require_idle_in_the_passive_tier_refuses_a_host_it_cannot_prove_idle",
         "tests/run/test_hostrun.py::test_processes_hidden_from_this_user_are_refused_when_rm_refused_its_list_too")),
    "passive-takes-an-unread-list-for-idle": M(
        "the passive tier's --require-idle takes a process list it could not read for an empty one",
        "rmpeer/run/execute.py",
        '        require_idle_of(now if now.get("available") else {"error": now.get("reason", "not read")},',
        '        require_idle_of(now if now.get("available") else {"processes": []},',
        ("tests/cli/test_certify_live_rules.py::test_require_idle_in_the_passive_tier_refuses_a_host_it_cannot_prove_idle",)),
    "prolog-drains-on-no-verdict": M(
        "the Slurm prolog drains on exits 5, 6 and 7", "rmpeer/integrations/slurm/rmpeer-prolog",
        '    *) log "no verdict', '    5|6|7) exit 1 ;;\n    *) log "no verdict',
        ("tests/fleet/test_slurm.py::test_no_verdict_exits_never_drain_in_the_prolog",)),
    "collect-drains-errors": M(
        "fleet collect --drain drains a node that gave no verdict", "rmpeer/fleet/collect.py",
        "        if o.state == FAIL_STATE or (o.state == DEGRADED_STATE",
        "        if o.state in (FAIL_STATE, ERROR) or (o.state == DEGRADED_STATE",
        ("tests/fleet/test_slurm.py::test_collect_never_drains_a_node_that_gave_no_verdict",)),
    "floors-only-by-any": M(
        '"below its floors alone" takes any finding, not all', "rmpeer/fleet/outcome.py",
        "    floors = bool(bad) and all(", "    floors = bool(bad) and any(",
        ("tests/fleet/test_outcome.py::test_a_node_degraded_by_floors_and_an_xid_is_not_floors_only",)),
    "sweep-drops-missing-nodes": M(
        "a node sweep.json names, with no folder, is dropped", "rmpeer/fleet/collect.py",
        "        if node not in found:", "        if False:",
        ("tests/fleet/test_outcome.py::test_a_node_the_sweep_named_without_a_folder_is_an_error",)),
    "unreadable-status-is-empty": M(
        "an unreadable status.json is read as {}", "rmpeer/fleet/outcome.py",
        'status = {"exit": None, "line": f"unreadable {folder / STATUS}"}', "status = {}",
        ("tests/fleet/test_outcome.py::test_an_unreadable_status_line_is_an_error_even_beside_a_pass",),
        alt=(("""        return {"exit": None, "line": reason_line("tool", f"unreadable {path}: {getattr(exc, 'msg', None) """
              """or exc}")}""", "        return {}"),)),
    "unknown-verdict-certified": M(
        "an unknown verdict's exit code is CERTIFIED's", "rmpeer/model/result.py",
        "EXIT_CODES.get(self.verdict, EXIT_INCOMPLETE)", "EXIT_CODES.get(self.verdict, EXIT_OK)",
        ("tests/render/test_outputs.py::test_an_unknown_verdict_is_incomplete_never_certified",)),
    "tier-always-full": M(
        "the certificate's tier is always written as full", "rmpeer/run/assemble.py",
        "    made = dict(node=_node(spec), tier=spec.tier, target=target_of(spec), version=__version__,",
        '    made = dict(node=_node(spec), tier="full", target=target_of(spec), version=__version__,',
        ("tests/render/test_outputs.py::test_json_line_of_a_replay",)),
    "replay-write-first-8-bytes": M(
        "a replayed CPU write compares only its first 8 bytes", "rmpeer/shim/replay.py",
        "        if rec.request != bytes(data).hex():", "        if rec.request[:16] != bytes(data).hex()[:16]:",
        ("tests/shim/test_shim.py::test_a_replayed_cpu_write_is_compared_whole",)),
    "observe-loses-label": M(
        "a live observation record loses its label", "rmpeer/shim/live.py",
        'self.rec.add(CallRecord(0, "observe", label=label, extra={"value": value}))',
        'self.rec.add(CallRecord(0, "observe", extra={"value": value}))',
        ("tests/shim/test_shim.py::test_a_live_observation_keeps_its_label",)),
    # -- found since (issue 27, part 5) ------------------------------------------------------------
    "reasons-repeat-subjects": M(
        "a reason counts a subject once per finding, not once", "rmpeer/judge/verdict.py",
        '        if f.subject not in g["subjects"]:\n            g["subjects"].append(f.subject)',
        '        g["subjects"].append(f.subject)',
        ("tests/judge/test_verdict.py::test_a_reason_counts_the_subjects_it_stands_for",)),
    "one-reason-only": M(
        "the verdict keeps only its first reason", "rmpeer/judge/verdict.py",
        "            return name, _reasons(chosen)", "            return name, _reasons(chosen[:1])",
        ("tests/judge/test_verdict.py::test_a_reason_counts_the_subjects_it_stands_for",)),
    "no-p-state-passes": M(
        "a card RM gave no P-state passes", "rmpeer/judge/verdict.py",
        '        if not r.get("pstate"):\n            out.append(Finding("clocks"',
        '        if False:\n            out.append(Finding("clocks"',
        ("tests/judge/test_verdict.py::test_a_card_without_a_p_state_degrades",)),
    "link-refusal-passes": M(
        "a link reading RM refused passes as a card without NVLink", "rmpeer/judge/verdict.py",
        '    if not health.get("supported") or reason:', "    if False:",
        ("tests/judge/test_verdict.py::test_a_link_reading_rm_refused_is_never_a_pass",)),
    "end-counters-unread-pass": M(
        "error counters RM would not give at the run's end pass", "rmpeer/judge/verdict.py",
        "for r in (before, after) if r), refused]) if why]", "for r in (before,) if r), refused]) if why]",
        ("tests/judge/test_verdict.py::test_link_counter_growth_is_judged_by_the_judge",),
        alt=(("for r in (before, after) if r) if why]", "for r in (before,) if r) if why]"),)),
    "excerpt-of-the-expected-bytes": M(
        "a mismatch's excerpt shows the expected bytes, not those found", "rmpeer/traffic/bytecheck.py",
        "a[first:first + EXCERPT_BYTES]", "b[first:first + EXCERPT_BYTES]",
        ("tests/traffic/test_bytecheck.py::test_two_flipped_words_report_the_first",)),
    "junit-unknown-outcome-passes": M(
        "JUnit shows a check outcome it does not know as a pass", "rmpeer/render/junit.py",
        '        elif check.outcome != "passed":', "        elif False:",
        ("tests/render/test_outputs.py::test_junit_shows_an_outcome_it_does_not_know_as_an_error",)),
    "table-partial-fail-ok": M(
        "the table shows a cell with one failed copy of several as ok", "rmpeer/render/table.py",
        'f"{tag}:ok" if passed == total', 'f"{tag}:ok" if passed',
        ("tests/render/test_render.py::test_a_cell_with_one_failed_copy_of_two_says_fail",)),
    "table-counts-skipped-setup": M(
        "the table counts a skipped setup check as a failed one", "rmpeer/render/table.py",
        'c.s is not None and c.outcome != "skipped":', "c.s is not None:",
        ("tests/render/test_render.py::test_a_cell_with_one_failed_copy_of_two_says_fail",)),
    "passive-swapped-card-passes": M(
        "the passive tier passes a card whose bus holds another GPU than RM's", "rmpeer/judge/passive.py",
        '            if g is None or g["uuid"] != card.uuid:', "            if g is None:",
        ("tests/judge/test_judge_passive.py::test_the_kernel_modules_account_of_the_cards_must_match_rms",)),
    "passive-extra-gpu-passes": M(
        "the passive tier passes a GPU the kernel module lists and RM does not", "rmpeer/judge/passive.py",
        "        if len(by_bus) != len(facts.cards) and not some_cards(facts):", "        if False:",
        ("tests/judge/test_judge_passive.py::test_the_kernel_modules_account_of_the_cards_must_match_rms",)),
    "no-nvlink-passes-an-nvlink-topology": M(
        "a card without NVLink passes where the topology expects NVLinks", "rmpeer/judge/verdict.py",
        '"no NVLink", DEGRADE)] if expected else []', '"no NVLink", DEGRADE)] if False else []',
        ("tests/judge/test_verdict.py::test_a_card_without_nvlink_on_an_nvlink_topology_degrades",)),
    "floors-of-the-matched-entry": M(
        "--expect-topology is ignored when choosing the floors", "rmpeer/judge/floors.py",
        "    if expected is not None:\n        topology, source", "    if False:\n        topology, source",
        ("tests/judge/test_verdict.py::test_the_topology_asked_for_gives_the_floors",)),
    "diff-exit-lost-with-its-stdout": M(
        "diff's table written to a stdout whose reader left: the guard's exit 0 says same behaviour",
        "rmpeer/cli/diff.py", "    except OSError as exc:\n        # the exit code is the answer",
        "    except ZeroDivisionError as exc:\n        # the exit code is the answer",
        ("tests/system/test_user_hunt.py::test_row[diff | head of two runs that differ keeps exit 1]",)),
    "observed-values-unchecked": M(
        "a recording's observed values taken unchecked: a string where MHz belong is an internal error mid-replay",
        "rmpeer/shim/records.py", '    if rec.op == "observe" and (kind := kind_of(rec.label)) is not None:',
        '    if False and (kind := kind_of(rec.label)) is not None:',
        ("tests/shim/test_observed.py::test_a_recording_with_a_value_of_another_kind_is_refused_in_one_line"
         "[clocks-mhz-text]",)),
    "collect-stops-at-its-stdout": M(
        "fleet collect's node table to a full stdout raises: no summary, no JUnit, and exit 5 for a failed node",
        "rmpeer/fleet/collect.py", "    say(table(outcomes))", "    print(table(outcomes))",
        ("tests/fleet/test_outcome.py::test_collect_whose_stdout_is_gone_still_writes_its_files_and_keeps_its_answer"
         "[full]",)),
    "lost-stdout-is-an-internal-error": M(
        "a full stdout under rmpeer show is taken for rmpeer's own fault: an internal error and a traceback file",
        "rmpeer/cli/certify_options.py", "        if exc is out.lost:\n", "        if exc is None:\n",
        ("tests/system/test_user_hunt.py::test_row[show > /dev/full]",)),
    "verdict-line-sends-input-raw": M(
        "certify's verdict line quotes a card's reason (an Xid's text a recording holds) unescaped",
        "rmpeer/render/verdict.py", "    return escaped(short(f\"{result.verdict}: {'; '.join(parts)}\", limit)) if parts",
        "    return (short(f\"{result.verdict}: {'; '.join(parts)}\", limit)) if parts",
        ("tests/run/test_passive_recording.py::test_an_xid_text_of_a_recording_reaches_no_terminal_raw",)),
    "show-keeps-a-fields-line-break": M(
        "rmpeer show sends a line break a recording's field holds: a forged line",
        "rmpeer/cli/show.py", "        say(escaped(text))\n", "        say(text)\n",
        ("tests/cli/test_show.py::test_a_line_break_in_a_recording_forges_no_line_of_show[card-name]",)),
    "the-run-arms-no-deadline": M(
        "the run arms no deadline: a hung call blocks the prolog until the scheduler kills it",
        "rmpeer/run/execute.py", "    with _deadline(progress, started, at_deadline):",
        "    with contextlib.nullcontext():",
        ("tests/system/test_never_drain.py::test_a_hung_call_ends_incomplete_at_the_deadline",)),
    "node-follows-a-planted-certificate": M(
        "fleet node reads this run's certificate through a link planted at its name (a FIFO hangs it)",
        "rmpeer/fleet/node.py", "        data = read_certificate(Path(ran.certificate), follow=False)",
        "        data = __import__('json').loads(Path(ran.certificate).read_text())",
        ("tests/fleet/test_node.py::test_a_link_to_a_fifo_swapped_in_for_the_certificate_never_hangs_the_node",)),
    "card-range-unbounded": M(
        "a card range is expanded however long it is (--cards 0-999999999 takes 160 GB)",
        "rmpeer/machine/selection.py", "    if last - first >= MAX_RANGE:", "    if False:",
        ("tests/machine/test_selection.py::test_a_range_or_index_no_host_has_is_refused_before_it_is_expanded"
         "[0-5000000-CUDA_VISIBLE_DEVICES]",)),
    "unreachable-output-is-an-internal-error": M(
        "an output under a folder this user may not enter (EACCES, ENAMETOOLONG, ELOOP) is exit 5, not 2",
        "rmpeer/machine/writable.py", "        pass\n    except OSError as exc:\n        raise ConfigError(f\"{option} {given}",
        "        pass\n    except ZeroDivisionError as exc:\n        raise ConfigError(f\"{option} {given}",
        ("tests/system/test_user_hunt.py::test_row[--output under a loop of links]",)),
    "node-name-takes-c1-controls": M(
        "a node name's 8-bit CSI or right-to-left override reaches JUnit and Allure raw",
        "rmpeer/cli/certify_options.py", "        if any(not c.isprintable() for c in value):",
        "        if any(ord(c) < 32 or ord(c) == 127 for c in value):",
        ("tests/system/test_never_drain.py::test_a_tool_error_is_its_documented_code_in_one_line"
         "[node-name-c1-control]",)),
    "recording-name-printed-raw": M(
        "certify prints a recording's file name raw: a screen clear in its name reaches the terminal",
        "rmpeer/cli/certify.py", '    return f"{_replay_short(spec)} ({escaped(spec.target.path)})"',
        '    return f"{_replay_short(spec)} ({spec.target.path})"',
        ("tests/cli/test_certify_input.py::test_a_recording_and_an_output_named_with_escapes_reach_no_terminal_raw",)),
    "sweep-shared-unchecked": M(
        "fleet sweep takes a --shared holding a line break (it ended a line of the job script)",
        "rmpeer/fleet/sweep.py", "    if not str(shared).isprintable():", "    if False:",
        ("tests/fleet/test_sweep.py::test_a_sweep_it_cannot_submit_is_refused_before_anything_is_made"
         "[options0-without line breaks or control characters]",)),
    "hook-log-through-a-link": M(
        "the Slurm prolog appends to RMPEER_LOG_FILE through a link planted at its name",
        "rmpeer/integrations/slurm/rmpeer-prolog", '{ [ -L "$RMPEER_LOG_FILE" ] || ', "{ ",
        ("tests/integrations/test_hook_log.py::test_a_planted_log_file_is_neither_followed_nor_opened"
         "[link-rmpeer-prolog]",)),
    "calibrate-writes-before-it-checks": M(
        "calibrate --write replaces the folder's topologies.yaml before it checks that the new one loads",
        "rmpeer/cli/calibrate.py", "        TopologyMatrix(Path(trial)).match(host_facts)",
        "        write_file(path, text, what='calibrate: --write'); TopologyMatrix(path).match(host_facts)",
        ("tests/cli/test_calibrate.py::test_an_entry_that_does_not_load_leaves_the_copy_as_it_was",)),
    "replay-keeps-a-read-back-by-its-first-value": M(
        "a replay keeps a mapping's rebuilt read-back while the next one starts with the same word (a read-back "
        "that differs further on is compared as the earlier bytes)",
        "rmpeer/shim/replay.py", "        if runs != self._holds:",
        "        if self._holds is None or runs[0][2] != self._holds[0][2]:",
        ("tests/shim/test_replay.py::test_a_read_back_that_differs_from_the_one_before_is_checked_as_read",)),
    "matrices-digest-reads-any-file": M(
        "the matrices' digest reads whatever is named *.yaml in the folder (a FIFO blocks the run's end, "
        "/dev/zero fills the memory)",
        "rmpeer/tables/load.py", "        if not stat.S_ISREG(found.st_mode):\n            raise MatrixError(path, \"file\", \"not a regular file (every",
        "        if False:\n            raise MatrixError(path, \"file\", \"not a regular file (every",
        ("tests/tables/test_load.py::test_a_matrices_folder_holding_no_regular_file_is_refused_before_the_run[link-to-dev-zero-full]",)),
    "matrices-digested-only-at-the-end": M(
        "the matrices folder is digested only when the run is judged: a folder there is an internal error "
        "after the run, not exit 2 before it",
        "rmpeer/run/spec.py", "    matrices_digest()\n    if req.replay:", "    if req.replay:",
        ("tests/tables/test_load.py::test_a_matrices_folder_holding_no_regular_file_is_refused_before_the_run[folder-full]",)),
    "channel-offsets-unbounded": M(
        "channel.yaml's sizes and offsets are taken at any value (a negative ring offset wrote the ring "
        "outside the control block: NOT CERTIFIED for a broken matrix)",
        "rmpeer/tables/channel.py", "        if not least <= value < bound:", "        if False:",
        ("tests/tables/test_channel.py::test_a_size_offset_or_count_of_the_wrong_type_or_range_is_refused[ring_offset--1]",)),
    "channel-timeout-unbounded": M(
        "channel.yaml's timeout_s is taken at any positive value (1e300: the live wait's int(timeout_s * 1e9) "
        "raised OverflowError at the first copy, exit 5; 1e-300 made every healthy copy a fault)",
        "rmpeer/tables/channel.py", "    if not positive_finite(timeout) or not least <= timeout < below:",
        "    if not positive_finite(timeout):",
        ("tests/tables/test_channel.py::test_a_timeout_no_copy_wait_can_use_is_refused[1e+300]",)),
    "ioctl-struct-size-unchecked": M(
        "the struct an escape is sent with is taken at any size: past the request's 14-bit size slot it spilled "
        "into the direction bits (a request no driver answers, exit 5), as 228 card slots of NV_ESC_CARD_INFO "
        "did",
        "rmpeer/abi/used.py", '        if spec["size"] * count >= limit:', "        if False:",
        ("tests/abi/test_drivers.py::test_a_broken_number_is_refused_naming_the_file_and_key"
         "[releases.0.structs.NVOS64_PARAMETERS.size=16384]",)),
    "struct-size-unbounded": M(
        "a struct of drivers.yaml is taken at any size (10**13: a MemoryError at its first pack, exit 5; "
        "-8 with no field: a ValueError)",
        "rmpeer/abi/drivers.py", "    if not 0 <= size <= limit:", "    if False:",
        ("tests/abi/test_drivers.py::test_a_broken_number_is_refused_naming_the_file_and_key"
         "[releases.0.structs.NVOS64_PARAMETERS.size=10000000000000]",)),
    "struct-size-unaligned": M(
        "a struct's size that is no multiple of its widest member is taken (NVOS64_PARAMETERS of 49 bytes)",
        "rmpeer/abi/drivers.py", "    if size % align:", "    if False:",
        ("tests/abi/test_drivers.py::test_a_broken_number_is_refused_naming_the_file_and_key"
         "[releases.0.structs.NVOS64_PARAMETERS.size=49]",)),
    "bit-value-wider-than-its-field": M(
        "a bit field's named value is taken at any width (NVOS33_FLAGS.ACCESS WRITE_ONLY: 4 in bits 1:0 raised "
        "ValueError where the flags were composed, mid-run: exit 5)",
        "rmpeer/tables/load.py", '        require_below(path, f"{where}.values.{name}", value, 1 << (hi - lo + 1))',
        '        require_below(path, f"{where}.values.{name}", value, 1 << 64)',
        ("tests/abi/test_drivers.py::test_a_broken_number_is_refused_naming_the_file_and_key"
         "[releases.0.bitfields.NVOS33_FLAGS.ACCESS.values.WRITE_ONLY=4]",
         "tests/ce/test_classes.py::test_a_broken_engine_matrix_is_refused_naming_the_key"
         "[HOPPER_DMA_COPY_A.bitfields.LAUNCH_DMA.DATA_TRANSFER_TYPE.values.NON_PIPELINED=4]")),
    "constant-unchecked": M(
        "drivers.yaml's constants are taken as written (2**40 or 'x' for a field of a struct: an OverflowError or "
        "ValueError at the run's first call, exit 5)",
        "rmpeer/abi/drivers.py", '            _check_constant(self.path, f"{where}: constant {name}", value)',
        "            pass",
        ("tests/abi/test_drivers.py::test_a_broken_number_is_refused_naming_the_file_and_key"
         "[releases.0.constants.NV_RM_API_VERSION_CMD_QUERY=10995116277]",)),
    "engine-names-unchecked": M(
        "engines.yaml is taken without the USERD members, registers, constants and bit fields the engine reads "
        "by name (NOTIFY_CHANNEL_PENDING deleted: a KeyError at the first copy, exit 5; SEM_EXECUTE deleted: a "
        "replay that diverged, DEGRADED)",
        "rmpeer/ce/classes.py", "    if gname in MEASURED:\n        _check_names(path, gen)",
        "    if False:\n        _check_names(path, gen)",
        ("tests/ce/test_classes.py::test_a_broken_engine_matrix_is_refused_naming_the_key"
         "[HOPPER_USERMODE_A.registers.NOTIFY_CHANNEL_PENDING='deleted']",
         "tests/ce/test_classes.py::test_a_broken_engine_matrix_is_refused_naming_the_key"
         "[HOPPER_CHANNEL_GPFIFO_A.bitfields.SEM_EXECUTE='deleted']")),
    "engine-value-names-unchecked": M(
        "a bit field the engine sets by value name is taken without that name (SEM_EXECUTE.OPERATION without "
        "ACQ_CIRC_GEQ: a KeyError at the first gated copy)",
        "rmpeer/ce/classes.py", "                missing = [v for v in values if v not in group.fields[fname].values]",
        "                missing = []",
        ("tests/ce/test_classes.py::test_a_broken_engine_matrix_is_refused_naming_the_key"
         "[HOPPER_CHANNEL_GPFIFO_A.bitfields.SEM_EXECUTE.OPERATION.values.ACQ_CIRC_GEQ='deleted']",)),
    "channel-not-checked-against-the-engines": M(
        "the spec loads channel.yaml and engines.yaml without checking one against the other (a LAUNCH_DMA field "
        "typo in channel.yaml was a KeyError at the first copy, exit 5)",
        "rmpeer/run/spec.py", "        check_channel(load_channel(notifier_bytes=notifier), load_engines())",
        "        load_channel(notifier_bytes=notifier), load_engines()",
        ("tests/run/test_spec.py::test_a_launch_field_the_copy_class_lacks_is_refused_before_the_run",)),
    "launch-value-names-unchecked": M(
        "a LAUNCH_DMA value name of channel.yaml is taken without the copy class naming it (NON_PIPELINEDX: a "
        "KeyError at the first copy)",
        "rmpeer/ce/classes.py", "                if isinstance(value, str) and value not in field.values:",
        "                if False:",
        ("tests/ce/test_classes.py::test_a_launch_field_the_copy_class_lacks_is_refused_naming_channel_yaml"
         "[launch_copy.DATA_TRANSFER_TYPE='NON_PIPELINEDX']",)),
    "copy-subchannel-unbounded": M(
        "channel.yaml's copy_subchannel is taken past the method header's 3-bit field (8: a ValueError composing "
        "the first method, exit 5)",
        "rmpeer/ce/classes.py", '        if channel["copy_subchannel"] >= sub.holds_below:',
        "        if False:",
        ("tests/ce/test_classes.py::test_the_copy_subchannel_must_fit_the_method_headers_field[8-True]",)),
    "efficiencies-checked-after-the-run": M(
        "efficiencies.yaml is first read when the copies are judged: a broken one is exit 2 after the whole run "
        "drove the GPUs, not before it",
        "rmpeer/run/spec.py", "        load_efficiencies(class_names=", "        dict(class_names=",
        ("tests/run/test_spec.py::test_a_broken_efficiencies_file_is_refused_before_the_run[efficiency-2]",)),
    "efficiency-copy-classes-unchecked": M(
        "efficiencies.yaml's copy classes are taken without drivers.yaml naming them (a typo matched no card: "
        "every host on derived floors DEGRADED, no floors for this host)",
        "rmpeer/judge/derived.py", "        if unknown:     # no card would be of this generation",
        "        if False:     # no card would be of this generation",
        ("tests/judge/test_derived.py::test_a_copy_class_drivers_yaml_does_not_name_is_refused",
         "tests/run/test_spec.py::test_a_broken_efficiencies_file_is_refused_before_the_run[copy-class-typo]")),
    "topology-floor-not-finite": M(
        "a topologies.yaml floor is taken as .nan or .inf (NaN judged nothing: every figure passed it; infinity "
        "failed every host: DEGRADED for a broken matrix)",
        "rmpeer/tables/topology.py", "            if value is not None and not positive_finite(value):",
        "            if value is not None and (isinstance(value, bool) or value <= 0):",
        ("tests/tables/test_topology.py::test_malformed_entry_keys_are_refused_naming_the_line[floors:-cross_card_gbps: "
         "355-cross_card_gbps: .nan-floors.cross_card_gbps-must be a finite GB/s figure above 0, found nan]",)),
    "topology-link-count-unbounded": M(
        "topologies.yaml's links.count is taken past the most NVLinks a card reports (10**20: every matching host "
        "DEGRADED for a broken matrix)",
        "rmpeer/tables/topology.py", "            if self.max_links is not None and count > self.max_links:",
        "            if False:",
        ("tests/tables/test_topology.py::test_more_nvlinks_than_a_card_reports_are_refused[65-True]",
         "tests/run/test_spec.py::test_a_link_count_no_card_reports_is_refused_before_the_run")),
    "pcie-read-raw-by-the-fingerprint": M(
        "a live run's fingerprint reads pcie.yaml unchecked (a missing key was a KeyError after every check had "
        "run, exit 5)",
        "rmpeer/run/fingerprint.py", '    return load_pcie(matrices_dir() / "pcie.yaml")',
        '    return __import__("rmpeer.tables.load").tables.load.load_yaml(matrices_dir() / "pcie.yaml")',
        ("tests/tables/test_pcie.py::test_the_fingerprint_of_a_host_refuses_a_broken_file_by_name",)),
    "pcie-checked-only-after-the-run": M(
        "pcie.yaml is first read by the fingerprint at the run's end, not checked before the run",
        "rmpeer/run/spec.py", "    load_pcie()\n    load_nvml()\n", "    load_nvml()\n",
        ("tests/run/test_spec.py::test_a_broken_pcie_file_is_refused_before_the_run",)),
    "pcie-loop-guard-unbounded": M(
        "pcie.yaml's max_hops is taken at any size (10**12: the walk of a looping capability chain has no guard)",
        "rmpeer/tables/pcie.py", '    hops = require_below(path, f"{at}.max_hops", ext["max_hops"], offsets + 1)',
        '    hops = require_below(path, f"{at}.max_hops", ext["max_hops"], 1 << 64)',
        ("tests/tables/test_pcie.py::test_a_broken_pcie_matrix_is_refused_naming_the_key"
         "[extended_capabilities.max_hops=1000000000000]",)),
    "notifier-size-unchecked": M(
        "channel.yaml's error notifier is not checked against drivers.yaml's NvNotification (RM writes a "
        "fault's notification past an 8-byte mapping)",
        "rmpeer/run/spec.py", "check_channel(load_channel(notifier_bytes=notifier), load_engines())",
        "check_channel(load_channel(), load_engines())",
        ("tests/run/test_spec.py::test_an_error_notifier_smaller_than_drivers_nvnotification_is_refused_before_the_run",)),
    "caps-rows-by-max-ces": M(
        "the copy engines' caps table is read by NV2080_CTRL_MAX_CES, which 535's headers lack (a KeyError, "
        "exit 5, at every open of a 535 driver)",
        "rmpeer/rm/host.py", "        for lce in range(len(table) // width):",
        '        for lce in range(abi.const("NV2080_CTRL_MAX_CES")):',
        ("tests/rm/test_host_ce_caps.py::test_a_535_caps_table_is_read_without_max_ces",)),
    "count-constants-unchecked": M(
        "a constant rmpeer loops over (ECC units, CEs, PIDs, clock domains) is taken past the array it counts "
        "(ECC_UNIT_COUNT 2**31: a MemoryError after 40 s of decoding, exit 5)",
        "rmpeer/abi/drivers.py", "            check_counts(self.path, release, merged)", "            pass",
        ("tests/abi/test_drivers.py::test_a_broken_number_is_refused_naming_the_file_and_key"
         "[releases.0.constants.NV2080_CTRL_GPU_ECC_UNIT_COUNT=21474836]",)),
    "channel-regions-may-overlap": M(
        "channel.yaml's ring, USERD and pushbuffer may overlap in the control block (ring_entries 0x4000 ran the "
        "ring over USERD; USERD at the pushbuffer's offset: NOT CERTIFIED for a broken matrix)",
        "rmpeer/ce/classes.py", "        if end > later:", "        if False:",
        ("tests/ce/test_classes.py::test_the_ring_userd_and_pushbuffer_must_not_overlap[ring-over-userd]",)),
    "semaphore-slots-past-the-mapping": M(
        "channel.yaml's semaphore slots are taken past the semaphore mapping (slot size 0x8000: slots 2 and 3 "
        "past 0x10000, an IndexError at the first gated copy, exit 5)",
        "rmpeer/tables/channel.py", '    if SEMAPHORE_SLOTS * channel["semaphore_slot_size"] > channel["semaphore_size"]:',
        "    if False:",
        ("tests/tables/test_channel.py::test_the_semaphore_slots_rmpeer_uses_must_fit[slots-past-the-mapping]",)),
    "doorbell-register-past-the-mapping": M(
        "the doorbell register is taken past channel.yaml's usermode_map_size (the first doorbell write outside "
        "the mapping: an IndexError, exit 5)",
        "rmpeer/ce/classes.py", '            if at + 4 > channel["usermode_map_size"]:', "            if False:",
        ("tests/ce/test_classes.py::test_the_doorbell_register_must_be_inside_the_doorbell_mapping",)),
    "layout-sessions-unbounded": M(
        "a layout of more sessions than any run holds is taken at load (per_card: 10**30 built a tuple of that "
        "many sessions)",
        "rmpeer/tables/layouts.py", "        if count > MAX_SESSIONS:", "        if False:",
        ("tests/tables/test_layouts.py::test_more_sessions_than_any_run_can_hold_are_refused_at_load[one-per-card-per_card-17]",)),
    "nvstatus-without-nv-ok": M(
        "nvstatus.yaml is taken without NV_OK: every call that succeeds reads as a failure (NOT CERTIFIED for a "
        "broken matrix)",
        "rmpeer/abi/nvstatus.py", "    if OK not in statuses:", "    if False:",
        ("tests/abi/test_nvstatus.py::test_a_broken_code_is_refused_naming_the_status[deleted]",)),
    "calibrate-takes-any-figure": M(
        "calibrate takes a 0 or negative GB/s figure (a ZeroDivisionError, or floors below 0)",
        "rmpeer/cli/calibrate.py", "or not 0 < gbps < math.inf:", "or not -math.inf < gbps < math.inf:",
        ("tests/cli/test_calibrate.py::test_calibrate_refuses_in_one_line_with_exit_2[gbps-negative]",)),
    "refused-open-is-no-reason": M(
        "RM refusing the run's first calls is a FAIL that INCOMPLETE outranks: the verdict never says it",
        "rmpeer/run/assemble.py", "\"RM to accept the run's first calls\", said, UNFINISHED))",
        "\"RM to accept the run's first calls\", said, FAIL))",
        ("tests/system/test_user_hunt.py::test_rm_refusing_the_runs_first_calls_says_why_and_writes_its_certificate",)),
    "refused-open-writes-no-certificate": M(
        "a run whose open RM refused never makes its output folder: no certificate says why",
        "rmpeer/run/execute.py",
        "                host.spec.output.mkdir(parents=True, exist_ok=True)   # a refused open's certificate says why\n"
        "                if refused is None:\n",
        "                if refused is None:\n                    host.spec.output.mkdir(parents=True, exist_ok=True)\n",
        ("tests/system/test_user_hunt.py::test_rm_refusing_the_runs_first_calls_says_why_and_writes_its_certificate",
         # certify makes the folder before the run (its report's), so the run path is held to it
         # directly: with certify's test alone the mutant survived
         "tests/system/test_user_hunt.py::test_the_run_path_makes_the_folder_a_refused_opens_certificate_goes_to")),
    "rm-refusal-line-without-handles": M(
        "the reason of a run that stopped on an RM refusal names the step and NV_ERR_* but not the object RM "
        "refused (its handles): nothing else the run leaves says which",
        "rmpeer/rm/errors.py", 'return f"{self.label}: {self.headline()}; handles: {self.handles_text()}"',
        'return f"{self.label}: {self.headline()}"',
        ("tests/run/test_passive.py::test_rm_refusing_a_discovery_control_is_incomplete",
         "tests/system/test_user_hunt.py::test_rm_refusing_the_runs_first_calls_says_why_and_writes_its_certificate")),
    "empty-replay-runs-live": M(
        "`--replay ''` (a variable left unset) certifies this host's GPUs instead of refusing",
        "rmpeer/run/spec.py", "    if req.replay is not None and not str(req.replay).strip():",
        "    if False:", ("tests/system/test_user_hunt.py::test_row[--replay with an empty name]",)),
    "fleet-node-takes-an-empty-folder": M(
        "fleet node takes an empty --output or --shared (an internal error, or <cwd>/<node>/)", "rmpeer/fleet/node.py",
        "        if given is not None and not given.strip():", "        if False:",
        ("tests/system/test_user_hunt.py::test_row[fleet node --output with an empty name]",
         "tests/system/test_user_hunt.py::test_row[fleet node --shared with an empty name]")),
    "fleet-node-folder-climbs-out-of-shared": M(
        "a node name such as ../x puts fleet node's folder outside the sweep's shared folder", "rmpeer/fleet/node.py",
        '    if "/" in node or node in (".", ".."):', "    if False:",
        ("tests/system/test_user_hunt.py::test_row[fleet node --shared with a node name that climbs out]",)),
    "recording-layouts-of-any-kind": M(
        "a header whose run layouts is not a list is met later as an internal error (exit 5)", "rmpeer/shim/shape.py",
        '    if not isinstance(run.get("layouts", []), list):', "    if False:",
        ("tests/system/test_user_hunt.py::test_row[header layouts is a number]",)),
    "recording-layout-without-cards": M(
        "a header layout that uses no card is replayed and judged NOT CERTIFIED (exit 1), not refused",
        "rmpeer/shim/replay.py", "        if not used:    # the recorder writes", "        if False:    # the recorder writes",
        ("tests/system/test_user_hunt.py::test_row[header layout with no cards (was NOT CERTIFIED)]",)),
    "recording-layout-name-unchecked": M(
        "a header layout's name is printed as it is: a newline in it forges a line of rmpeer's output",
        "rmpeer/shim/shape.py", "        if isinstance(entry, list) and entry and not (isinstance(entry[0], str)",
        "        if False and (isinstance(entry[0], str)",
        ("tests/system/test_user_hunt.py::test_row[header layout name holds a newline]",)),
    "recording-host-note-kinds-unchecked": M(
        "a host note whose P2P matrix or selection is not a mapping is an internal error (exit 5)",
        "rmpeer/shim/shape.py", "        if not isinstance(value, dict):\n            raise TranscriptError(f\"{name}: its host note's",
        "        if False:\n            raise TranscriptError(f\"{name}: its host note's",
        ("tests/system/test_user_hunt.py::test_row[host note p2p is text]", "tests/system/test_user_hunt.py::test_row[host note selection is text]")),
    "recording-host-facts-read-unguarded": M(
        "a host note's card with a field the recorder never writes is an internal error (exit 5)",
        "rmpeer/run/spec.py", "    except (TypeError, ValueError, AttributeError, KeyError) as exc:\n        raise TranscriptError(",
        "    except ZeroDivisionError as exc:\n        raise TranscriptError(",
        ("tests/system/test_user_hunt.py::test_row[host note card with a field the recorder never writes]",)),
    "recording-record-names-of-any-kind": M(
        "a call record whose label or path is not text is an internal error (exit 5)", "rmpeer/shim/records.py",
        "        if (value is not None or name in _TEXTS) and not isinstance(value, str):", "        if False:",
        ("tests/system/test_user_hunt.py::test_row[a label that is a number]", "tests/system/test_user_hunt.py::test_row[a path that is a number]")),
    "recording-record-mappings-of-any-kind": M(
        "a call record whose extra or payload is not a mapping is an internal error (exit 5)", "rmpeer/shim/records.py",
        "        if not isinstance(value, kind):", "        if False:",
        ("tests/system/test_user_hunt.py::test_row[an observation's extra that is text]", "tests/system/test_user_hunt.py::test_row[a payload that is a list]")),
    "recording-segment-key-of-any-kind": M(
        "a segment note whose key is not text is an internal error (exit 5)", "rmpeer/shim/records.py",
        '    if kind == "segment" and not (isinstance(key, str) and key.isprintable()):', "    if False:",
        ("tests/system/test_user_hunt.py::test_row[a segment's key that is a list]",)),
    "calibrate-write-follows-a-planted-link": M(
        "calibrate --write rewrites the file a link planted at DIR/topologies.yaml (or at DIR) points to",
        "rmpeer/cli/calibrate.py", "    if args.write:\n        checked_write(args.write)\n", "",
        ("tests/system/test_shared_host_trust.py::test_calibrate_write_at_a_planted_link_is_refused_with_the_target_untouched[topologies-link]", "tests/system/test_shared_host_trust.py::test_calibrate_write_at_a_planted_link_is_refused_with_the_target_untouched[write-link]")),
    "npd-configmap-reads-the-copied-folder": M(
        "fleet files kubernetes builds the ConfigMap from DIR/npd: a file another user planted there goes in",
        "rmpeer/fleet/files.py", 'npd_configmap(shipped(engine) / "npd")', 'npd_configmap(dest / "npd")',
        ("tests/fleet/test_kubernetes.py::test_the_npd_configmap_holds_only_the_shipped_files_whatever_the_folder_holds",)),
    "report-reads-through-planted-links": M(
        "rmpeer report hands Allure a results folder holding a link another user planted (to a root-only file)",
        "rmpeer/report/allure_html.py", "    for entry in sorted(results.iterdir()) if found else ():",
        "    for entry in ():",
        ("tests/system/test_user_hunt.py::test_row[report of results holding a planted link]",
         "tests/system/test_user_hunt.py::test_row[fleet report of results holding a planted link]")),
    "show-sends-a-recordings-escapes": M(
        "rmpeer show prints a recording's fields as they are: its terminal escapes reach the terminal",
        "rmpeer/cli/show.py", "        out(escaped(text, lines=True))", "        out(text)",
        ("tests/system/test_user_hunt.py::test_show_never_sends_a_recordings_control_characters_to_the_terminal[header-label]",
         "tests/system/test_user_hunt.py::test_show_never_sends_a_recordings_control_characters_to_the_terminal[call-label]")),
    "diff-sends-a-files-escapes": M(
        "rmpeer diff tabulates what two files hold as it is: their terminal escapes reach the terminal",
        "rmpeer/render/text.py", '    return "".join(c if c.isprintable() or c in keep else repr(c)[1:-1] for c in str(text))',
        "    return text",
        ("tests/system/test_user_hunt.py::test_diff_never_sends_a_recordings_control_characters_to_the_terminal",)),
    "if-stale-skips-a-replay": M(
        "certify --replay with --if-stale checks this host's certificate, and skips the replay when it holds",
        "rmpeer/cli/certify_options.py", "    if args.if_stale and args.replay:", "    if False:",
        ("tests/system/test_user_hunt.py::test_row[--replay with --if-stale]",)),
    "collector-drops-setup-failures": M(
        "a check whose setup or teardown failed is collected as passed", "rmpeer/pytest_plugin/results.py",
        "        if report.failed:", '        if report.failed and report.when == "call":',
        ("tests/pytest_plugin/test_results.py::test_each_outcome_is_the_one_pytests_report_phases_give",)),
    # -- a mutant hunt on the judge and the trust code (mutants2) ---------------------------------
    "info-finding-hides-a-failed-check": M(
        "a failed check whose words an INFO finding repeats is dropped from the verdict", "rmpeer/judge/verdict.py",
        "    texts = {f.text for f in findings if f.severity != INFO}", "    texts = {f.text for f in findings}",
        ("tests/judge/test_verdict.py::test_an_info_finding_never_hides_a_failed_check_of_the_same_words",)),
    "check-reason-prefix-restates": M(
        "a failed check whose reason only begins with a finding's words is taken as restating it",
        "rmpeer/judge/verdict.py", 'reason.startswith(t + "; ")', "reason.startswith(t)",
        ("tests/judge/test_verdict.py::test_a_check_reason_that_only_begins_with_a_findings_words_is_its_own_reason",)),
    "accepted-boost-unchecked": M(
        "the clocks after a boost RM accepted are not compared with the idle ones", "rmpeer/judge/verdict.py",
        "    if fitness.boost is None:\n        return out",
        "    if fitness.boost is None or not fitness.boost.failures:\n        return out",
        ("tests/judge/test_verdict.py::test_a_boost_rm_accepted_that_lowered_the_clocks_degrades",)),
    "link-status-refusal-passes": M(
        "a link status RM refused, on a card with NVLink, passes", "rmpeer/judge/verdict.py",
        '    if not health.get("supported") or reason:', '    if not health.get("supported"):',
        ("tests/judge/test_verdict.py::test_a_link_status_rm_refused_on_an_nvlink_card_is_never_a_pass",)),
    "xid-allowance-any-card": M(
        "an allowance for a provoked Xid on one card covers the same Xid on any card", "rmpeer/judge/verdict.py",
        '            if (card, x["xid"]) in allowed:', '            if x["xid"] in [a[1] for a in allowed]:',
        ("tests/judge/test_verdict.py::test_an_allowance_for_one_card_does_not_cover_the_same_xid_on_another",)),
    "check-reason-drops-layout": M(
        "a failed check's reason leaves out its layout", "rmpeer/judge/verdict.py",
        '            subject = c.subject if not c.layout or c.subject == c.layout else f"{c.layout} {c.subject}"',
        "            subject = c.subject",
        ("tests/judge/test_verdict.py::test_a_failed_checks_reason_names_its_layout_and_window",)),
    "three-subjects-and-more": M(
        "a reason of exactly three subjects says 'and more'", "rmpeer/judge/verdict.py",
        "{f' and {n - 3} more' if n > 3 else ''}", "{f' and {n - 3} more' if n >= 3 else ''}",
        ("tests/judge/test_verdict.py::test_three_subjects_are_all_named_and_a_fourth_is_and_more",)),
    "reason-bound-off-by-one": M(
        "a reason of exactly 300 characters is cut", "rmpeer/model/result.py",
        "    if len(text) <= limit:", "    if len(text) < limit:",
        ("tests/judge/test_verdict.py::test_a_reason_is_cut_to_at_most_300_characters",)),
    "figure-on-the-floor-not-met": M(
        "the certificate says a figure exactly on its floor did not meet it", "rmpeer/judge/floors.py",
        '"met": f["gbps"] >= met.gbps})', '"met": f["gbps"] > met.gbps})',
        ("tests/judge/test_verdict.py::test_the_certificate_says_a_figure_on_the_floor_met_it",)),
    "pair-links-of-the-better-card": M(
        "a pair's derived floor counts the links of the card with more, not fewer", "rmpeer/judge/derived.py",
        "    direct_n, switch_n = min(len(d_ab), len(d_ba)), min(len(s_a), len(s_b))",
        "    direct_n, switch_n = max(len(d_ab), len(d_ba)), max(len(s_a), len(s_b))",
        ("tests/judge/test_derived.py::test_a_pair_counts_the_fewer_connected_links_of_its_two_cards_at_the_slowest_rate",)),
    "unconnected-links-counted": M(
        "a link RM says is not connected counts toward a pair's derived floor", "rmpeer/judge/derived.py",
        'if x.get("connected") and (x.get("remote") or {}).get("type") == remote_type]',
        'if (x.get("remote") or {}).get("type") == remote_type]',
        ("tests/judge/test_derived.py::test_a_pair_counts_the_fewer_connected_links_of_its_two_cards_at_the_slowest_rate",)),
    "pair-rate-of-the-fastest-link": M(
        "a pair's derived floor takes its fastest link's rate, not its slowest", "rmpeer/judge/derived.py",
        "            rate = min(rates)", "            rate = max(rates)",
        ("tests/judge/test_derived.py::test_a_pair_counts_the_fewer_connected_links_of_its_two_cards_at_the_slowest_rate",)),
    "certificate-states-the-highest-floor": M(
        "the certificate states each kind's highest floor, not its lowest", "rmpeer/judge/floors.py",
        "            out[rate] = min((f.gbps for f in table.values()), default=None)",
        "            out[rate] = max((f.gbps for f in table.values()), default=None)",
        ("tests/judge/test_derived.py::test_the_certificate_states_the_lowest_floor_of_each_kind",)),
    "efficiency-above-one-accepted": M(
        "efficiencies.yaml may state an efficiency above 1", "rmpeer/judge/derived.py",
        "    if isinstance(eff, bool) or not 0 < eff <= 1:", "    if isinstance(eff, bool) or not 0 < eff:",
        ("tests/judge/test_derived.py::test_a_wrong_efficiency_file_is_refused_naming_the_entry",)),
    "no-enabled-nvlink-without-a-topology-degrades": M(
        "a card RM enables no NVLink on degrades on a host no topology expects links of", "rmpeer/judge/nvlink.py",
        "    elif not enabled and expected:", "    elif not enabled:",
        ("tests/judge/test_verdict.py::test_a_card_rm_enables_no_nvlink_on_is_judged_only_where_links_are_expected",)),
    "relative-key-path-accepted": M(
        "RMPEER_KEY may name the key by a relative path", "rmpeer/machine/signing.py",
        "        if not os.path.isabs(given):", "        if False:",
        ("tests/system/test_shared_host_trust.py::test_a_relative_key_path_is_refused_in_one_line",)),
    "key-folder-group-writable-accepted": M(
        "a key folder its group may write is accepted", "rmpeer/machine/signing.py",
        "    if st.st_mode & 0o022:\n        return f\"its mode {stat.S_IMODE(st.st_mode):04o} lets other users replace the key\"",
        "    if st.st_mode & 0o002:\n        return f\"its mode {stat.S_IMODE(st.st_mode):04o} lets other users replace the key\"",
        ("tests/system/test_shared_host_trust.py::test_a_key_another_user_could_read_or_replace_is_refused"
         "[folder-group-writable]",)),
    "short-host-key-accepted": M(
        "a host key of fewer than 32 bytes signs", "rmpeer/machine/signing.py",
        "    if len(key) != KEY_BYTES:", "    if len(key) < 16:",
        ("tests/system/test_shared_host_trust.py::test_a_key_file_that_is_not_32_bytes_of_hex_is_refused",)),
    "refused-cc-capabilities-pass": M(
        "Confidential Computing capabilities RM refused pass unsaid", "rmpeer/judge/health.py",
        '        _unread("confidential-compute", "host", fact, True, out, not_checked)',
        '        _unread("confidential-compute", "host", fact, False, out, not_checked)',
        ("tests/judge/test_judge_health.py::test_refused_confidential_computing_capabilities_are_not_checked_on_any_host",)),
    "misshapen-certificate-crashes-if-stale": M(
        "certify --if-stale on a certificate whose fields have another shape is an internal error (exit 5)",
        "rmpeer/run/freshness.py", "    except (AttributeError, TypeError, KeyError, ValueError) as exc:\n        return False",
        "    except ZeroDivisionError as exc:\n        return False",
        ("tests/run/test_freshness.py::test_a_certificate_whose_fields_have_the_wrong_shape_never_holds_and_never_crashes",)),
    "unnamed-recovery-action-is-info": M(
        "a recovery action the headers do not name is INFO, not DEGRADE", "rmpeer/judge/health.py",
        "    severity, what = RECOVERY.get(action, (DEGRADE,", "    severity, what = RECOVERY.get(action, (INFO,",
        ("tests/judge/test_judge_health.py::test_a_recovery_action_the_headers_do_not_name_degrades",)),
    "pcie-width-unread-judged": M(
        "a PCIe link RM read no width of is judged as if it had one", "rmpeer/judge/health.py",
        '    if not _read(fact) or fact.get("width") is None or fact.get("max_width") is None:',
        "    if not _read(fact):",
        ("tests/judge/test_judge_health.py::test_a_pcie_link_whose_width_rm_read_as_zero_is_not_checked",)),
    "signature-of-any-kind-checked": M(
        "a signature naming another algorithm is checked as HMAC-SHA256 and trusted", "rmpeer/machine/signing.py",
        '    if sig.get("alg") != ALG or not isinstance(sig.get("mac"), str):',
        '    if not isinstance(sig.get("mac"), str):',
        ("tests/run/test_freshness.py::test_a_signature_of_another_kind_is_not_trusted_even_with_a_valid_mac",)),
    "host-key-replaced-by-a-racing-run": M(
        "a first run that finds the key made meanwhile replaces it", "rmpeer/machine/signing.py",
        'mode=0o600, replace=False, what="the host key")', 'mode=0o600, replace=True, what="the host key")',
        ("tests/run/test_freshness.py::test_a_key_another_run_made_a_moment_ago_is_read_never_replaced",)),
    "card-unfinished-below-degrade": M(
        "a card's INCOMPLETE ranks below its DEGRADED and NOT CERTIFIED", "rmpeer/judge/cards.py",
        "UNFINISHED: (4, INCOMPLETE)", "UNFINISHED: (1, INCOMPLETE)",
        ("tests/judge/test_cards.py::test_a_card_that_could_not_be_checked_is_incomplete_even_beside_a_degrade",)),
    "pair-failed-copy-shown-passed": M(
        "a pair's read column says passed for a copy that returned the wrong bytes", "rmpeer/judge/cards.py",
        '            d[p.op] = "failed" if not p.ok else d.get(p.op) or "passed"', '            d[p.op] = d.get(p.op) or "passed"',
        ("tests/judge/test_cards.py::test_a_pairs_failed_copy_shows_in_its_read_column",)),
    "unknown-certificate-tier-holds": M(
        "a certificate of a tier rmpeer does not know is not told by its tier", "rmpeer/judge/freshness.py",
        "    elif c.tier not in TIERS:\n        out.append", "    elif False:\n        out.append",
        ("tests/run/test_freshness.py::test_a_certificate_of_a_tier_rmpeer_does_not_know_never_holds",)),
    "pair-column-failed-overwritten": M(
        "a pair's column that a failed check set is overwritten by a later passed check", "rmpeer/judge/cards.py",
        '            if dim in DIMENSIONS and c.outcome == "passed" and d.get(dim) is None:',
        '            if dim in DIMENSIONS and c.outcome == "passed":',
        ("tests/judge/test_cards.py::test_a_pairs_column_stays_failed_when_a_later_check_of_it_passes",)),
    "gone-card-unsaid": M(
        "a card the certificate has and this host no longer lists is not said stale", "rmpeer/judge/freshness.py",
        '        if pci not in now:\n            out.append(f"card {i} ({pci}, {c.get(\'uuid\')}) is gone")',
        "        if pci not in now:\n            pass",
        ("tests/run/test_freshness.py::test_a_card_gone_a_card_added_and_a_card_of_another_model_are_named",)),
    "new-card-unsaid": M(
        "a card this host lists and the certificate does not is not said", "rmpeer/judge/freshness.py",
        "    for pci, (i, n) in now.items():\n        if pci not in was:", "    for pci, (i, n) in now.items():\n        if False:",
        ("tests/run/test_freshness.py::test_a_card_gone_a_card_added_and_a_card_of_another_model_are_named",)),
    "card-model-change-unsaid": M(
        "a card of another model at the same bus is not said stale", "rmpeer/judge/freshness.py",
        '        elif n.get("model") != c.get("model"):', "        elif False:",
        ("tests/run/test_freshness.py::test_a_card_gone_a_card_added_and_a_card_of_another_model_are_named",)),
    "no-gpu-listed-unsaid": M(
        "a host whose /proc lists no GPU is not said so", "rmpeer/judge/freshness.py",
        '            if not new["cards"]:\n                out.append', "            if False:\n                out.append",
        ("tests/run/test_freshness.py::test_a_host_whose_proc_lists_no_gpu_says_so",)),
    "grown-list-compared-as-its-prefix": M(
        "a fingerprint list that grew is compared over the old length only", "rmpeer/judge/freshness.py",
        "    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):",
        "    if isinstance(old, list) and isinstance(new, list):",
        ("tests/run/test_freshness.py::test_an_iommu_unit_added_is_a_change",)),
    "after-gpu-processes-unread-unsaid": M(
        "the GPU-process list that could not be read after the run is not named as not checked",
        "rmpeer/judge/unchecked.py", '    for when in ("before", "after", "now"):', '    for when in ("before", "now"):',
        ("tests/judge/test_unchecked.py::test_each_gpu_process_list_that_could_not_be_read_is_not_checked",)),
    "not-checked-one-entry-per-check": M(
        "two reasons one check could not be made are kept as one", "rmpeer/judge/unchecked.py",
        '        key = (item["check"], item["reason"])', '        key = item["check"]',
        ("tests/judge/test_unchecked.py::test_one_reason_of_one_check_is_one_entry_and_two_reasons_are_two",)),
    "require-complete-exit-8-beside-a-cut": M(
        "a run cut short is taken as --require-complete's refusal alone (exit 8)", "rmpeer/model/result.py",
        "all(c == REQUIRE_COMPLETE for c in unfinished)", "any(c == REQUIRE_COMPLETE for c in unfinished)",
        ("tests/judge/test_unchecked.py::test_require_complete_refuses_only_a_certified_run_and_says_so",)),
    "lock-folder-group-writable-accepted": M(
        "a lock folder its group may write is accepted", "rmpeer/machine/lock.py",
        "    if st.st_mode & 0o022 and not (sticky_ok and st.st_mode & stat.S_ISVTX):",
        "    if st.st_mode & 0o002 and not (sticky_ok and st.st_mode & stat.S_ISVTX):",
        ("tests/machine/test_lock.py::test_a_lock_folder_its_group_may_write_is_refused",)),
    "lock-folder-link-followed": M(
        "a lock folder that is a symbolic link is followed", "rmpeer/machine/lock.py",
        '    if stat.S_ISLNK(st.st_mode):\n        return "it is a symbolic link"\n    if not stat.S_ISDIR(st.st_mode):\n'
        '        return "it is not a folder"\n    if st.st_uid not in (uid, 0):',
        '    if not stat.S_ISDIR(os.stat(folder).st_mode):\n        return "it is not a folder"\n'
        "    if st.st_uid not in (uid, 0):",
        ("tests/machine/test_lock.py::test_a_lock_folder_that_is_a_link_is_refused",)),
    "sticky-runtime-folder-takes-the-lock": M(
        "a sticky world-writable $XDG_RUNTIME_DIR takes a user's lock", "rmpeer/machine/lock.py",
        "    if st.st_mode & 0o022 and not (sticky_ok and st.st_mode & stat.S_ISVTX):",
        "    if st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX:",
        ("tests/machine/test_lock.py::test_a_runtime_folder_not_this_users_alone_is_not_where_its_lock_goes[sticky-world-writable]",)),
    "roots-runtime-folder-takes-a-users-lock": M(
        "a $XDG_RUNTIME_DIR root owns takes a user's lock", "rmpeer/machine/lock.py",
        "_folder_problem(Path(runtime), uid, sticky_ok=False) is None and os.lstat(runtime).st_uid == uid:",
        "_folder_problem(Path(runtime), uid, sticky_ok=False) is None:",
        ("tests/machine/test_lock.py::test_a_runtime_folder_not_this_users_alone_is_not_where_its_lock_goes[roots]",)),
    "if-stale-ignores-the-cards-asked": M(
        "--if-stale takes a certificate of other cards for the cards asked", "rmpeer/run/freshness.py",
        "        if cards is not None:    # the cards asked for", "        if False:    # the cards asked for",
        ("tests/run/test_freshness.py::test_a_certificate_of_some_cards_holds_only_for_those",)),
    "own-video-memory-trusted-when-one-card-grew": M(
        "the per-process video memory is trusted for every card when it grew on some", "rmpeer/judge/sharedhost.py",
        "        if len(grew) == len(cards):", "        if grew:",
        ("tests/judge/test_sharedhost.py::test_a_per_process_figure_that_missed_one_cards_buffers_is_not_trusted_for_any",)),
    "backwards-range-names-no-card": M(
        "--cards 3-1 names no card instead of being refused", "rmpeer/machine/selection.py",
        "        if m and int(m[1]) <= int(m[2]):", "        if m:",
        ("tests/machine/test_selection.py::test_bad_names_are_refused_before_the_host_is_known",)),
    "setup-that-took-no-memory-passes": M(
        "a setup whose buffers took no host-wide video memory passes the teardown check", "rmpeer/judge/sharedhost.py",
        "        if d[c] >= b[c]:", "        if d[c] > b[c]:",
        ("tests/judge/test_sharedhost.py::test_a_setup_that_took_no_video_memory_host_wide_fails",)),
    "other-cards-process-hides-the-teardown": M(
        "a process on another card makes the teardown's memory not applicable", "rmpeer/judge/sharedhost.py",
        '    held_by = [p for p in _processes((others or {}).get("processes", [])) if set(p.cards) & set(cards)]',
        '    held_by = _processes((others or {}).get("processes", []))',
        ("tests/judge/test_sharedhost.py::test_a_process_on_another_card_leaves_the_host_wide_figure_judged",)),
    "rm-platform-facts-not-compared": M(
        "RM's platform facts in two fingerprints are not compared", "rmpeer/judge/freshness.py",
        '    if "health" in old and "health" in new:', "    if False:",
        ("tests/judge/test_judge_freshness.py::test_rms_platform_facts_are_compared_when_both_fingerprints_have_them",)),
    "module-hash-cache-ignores-ctime": M(
        "the module's cached hash survives a same-size rewrite whose mtime was set back", "rmpeer/run/fingerprint.py",
        '    key = f"{path}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"',
        '    key = f"{path}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}"',
        ("tests/run/test_fingerprint.py::test_a_module_rewritten_in_place_with_its_old_size_and_mtime_gets_a_new_hash",)),
    "cards-joined-to-proc-by-position": M(
        "RM's cards get /proc's UUIDs by position, not by PCI bus id", "rmpeer/machine/selection.py",
        '        proc = by_bus.get(pci_key(info["pci"]), {})', "        proc = proc_gpus[index] if index < len(proc_gpus) else {}",
        ("tests/machine/test_selection.py::test_each_card_rm_lists_gets_the_uuid_proc_gives_its_bus",)),
    "module-hash-cache-of-anyone-believed": M(
        "a module hash cache another user could write is believed", "rmpeer/run/fingerprint.py",
        "            known = json.loads(read_own(cache))", "            known = json.loads(open(cache).read())",
        ("tests/run/test_fingerprint.py::test_a_hash_cache_another_user_could_write_is_not_believed",)),
    "module-not-live-is-a-load": M(
        "an nvidia module that is being loaded or unloaded is fingerprinted as a load", "rmpeer/run/fingerprint.py",
        '    if state != "live":', "    if False:",
        ("tests/run/test_fingerprint.py::test_a_module_being_loaded_or_unloaded_is_no_load_to_match",)),
    "no-nvlink-fingerprinted-as-zero-links": M(
        "a card without NVLink is fingerprinted as one with no active link", "rmpeer/run/fingerprint.py",
        '            out[uuid] = health.get("active") if health.get("supported", True) else "no NVLink"',
        '            out[uuid] = health.get("active")',
        ("tests/run/test_fingerprint.py::test_a_card_without_nvlink_is_said_so_in_the_fingerprint_not_counted_as_zero_links",)),
    "written-file-mode-ignored": M(
        "write_file leaves every file at the temporary file's mode", "rmpeer/safewrite.py",
        "    os.fchmod(fd, mode)\n", "",
        ("tests/system/test_shared_host_trust.py::test_a_written_file_has_the_mode_asked_for",)),
    "read-own-limit-ignored": M(
        "read_own believes a file longer than its limit", "rmpeer/safewrite.py",
        "        if len(data) > limit:", "        if False:",
        ("tests/system/test_shared_host_trust.py::test_a_file_believed_larger_than_its_limit_is_refused",)),
    "group-writable-state-believed": M(
        "a file its group may write is believed as this user's own", "rmpeer/safewrite.py",
        "    if st.st_mode & 0o022:\n        return f\"its mode {stat.S_IMODE(st.st_mode):04o} lets other users write it\"",
        "    if st.st_mode & 0o002:\n        return f\"its mode {stat.S_IMODE(st.st_mode):04o} lets other users write it\"",
        ("tests/system/test_shared_host_trust.py::test_a_state_file_another_user_could_have_written_is_not_believed[0664-"
         "its mode 0664 lets other users write it]",)),
    "own-fifo-believed": M(
        "read_own believes a FIFO of this user's as a file", "rmpeer/safewrite.py",
        '    if not stat.S_ISREG(st.st_mode):\n        return f"it is not a regular file ({_kind(st.st_mode)})"\n'
        "    if st.st_uid not in (uid, 0):",
        "    if st.st_uid not in (uid, 0):",
        ("tests/system/test_shared_host_trust.py::test_a_fifo_of_this_users_own_is_not_believed_as_a_file",)),
    "any-calibrated-floor-covers-every-pair": M(
        "a calibrated same-card floor is taken to cover a pair left without a floor", "rmpeer/judge/floors.py",
        '    return bool(calibrated.same_card if missing.startswith("card ") else calibrated.cross_card)',
        "    return bool(calibrated.same_card or calibrated.cross_card)",
        ("tests/judge/test_derived.py::test_a_pair_an_entry_calibrates_no_floor_for_is_still_named_when_none_is_derived",)),
    "render-blames-a-cut-short-card": M(
        "the verdict line blames a card that is INCOMPLETE only because the host's run was cut short",
        "rmpeer/render/verdict.py", '    return row["verdict"] not in (CERTIFIED, INCOMPLETE) or (',
        '    return row["verdict"] != CERTIFIED or (',
        ("tests/judge/test_cards.py::test_a_cut_short_run_certifies_no_card",)),
    "passive-health-unjudged": M(
        "the passive tier leaves RM's health facts unjudged", "rmpeer/judge/passive.py",
        '        "health": health_findings(facts.as_dict(), kind)[0],\n', '        "health": [],\n',
        ("tests/run/test_health_replay.py::test_each_branch_replays_to_its_verdict",)),
    "passive-unrecorded-passes": M(
        "a passive reading the recording does not hold passes instead of being skipped", "rmpeer/judge/passive.py",
        '"skipped" if any(f.found.startswith("not recorded") for f in found) else "passed")', '"passed")',
        ("tests/run/test_passive.py::test_passive_replay_of_each_recording",)),
    "passive-loads-prometheus": M(
        "every certify loads prometheus_client, --prometheus or not (a passive prolog pays its import)",
        "rmpeer/run/outputs.py", "from rmpeer.render.junit import junit_xml\n",
        "from rmpeer.render.junit import junit_xml\nimport rmpeer.render.prometheus  # noqa: F401\n",
        ("tests/system/test_heavy_imports.py::test_a_passive_certify_loads_no_heavy_library",)),
    "signal-in-a-check-blames-the-recording": M(
        "a test cut by a signal owes the rest of its recorded calls: no certificate, the recording blamed",
        "rmpeer/pytest_plugin/plugin.py", "    run.shim.end_segment(abandoned=failed or bool(interrupts.seen()))",
        "    run.shim.end_segment(abandoned=failed)",
        # certify runs a layout's pairs as one item, whose pairs' stretches pairs.py ends: the
        # check cut must be an item's own (the fault check) for this line to be the one that counts
        ("tests/system/test_never_drain.py::test_a_signal_inside_a_check_of_its_own_item_is_an_incomplete_certificate",
         "tests/system/test_never_drain.py::test_a_signal_inside_a_check_is_an_incomplete_certificate")),
    "rmpeers-own-error-fails-the-host": M(
        "a check stopped by an error rmpeer did not expect is judged a failure of the host (exit 1 drains it)",
        "rmpeer/judge/verdict.py",
        "            severity = UNFINISHED if c.unexpected else DEGRADE if c.area == FITNESS_AREA else FAIL",
        "            severity = DEGRADE if c.area == FITNESS_AREA else FAIL",
        ("tests/judge/test_verdict.py::test_a_check_stopped_by_an_error_rmpeer_did_not_expect_says_nothing_of_the_host",
         "tests/cli/test_certify_input.py::test_a_check_that_stops_on_an_error_rmpeer_did_not_expect_is_incomplete_not_a_failure")),
    "every-error-is-expected": M(
        "the plugin takes every exception for the check's own outcome", "rmpeer/pytest_plugin/plugin.py",
        '            "unexpected": excinfo is not None and not _expected(excinfo.value), "detail": _detail(excinfo)}',
        '            "unexpected": False, "detail": _detail(excinfo)}',
        ("tests/cli/test_certify_input.py::test_a_check_that_stops_on_an_error_rmpeer_did_not_expect_is_incomplete_not_a_failure",)),
    "finalizer-swallows-the-signal": M(
        "a stop signal that lands in a finalizer is swallowed there: the run goes on to its end",
        "rmpeer/machine/interrupts.py", "            _record.again = _record.in_hook = True\n",
        "            _record.in_hook = True\n",
        ("tests/machine/test_interrupts.py::test_a_signal_inside_a_finalizer_still_stops_the_run_and_prints_nothing",)),
    "late-signal-dropped": M(
        "a stop signal after the run (while the outputs are written) is dropped, not noted: the run "
        "exits 0 CERTIFIED though it was told to stop before it had said so",
        "rmpeer/machine/interrupts.py", "    if not again:\n        _record.seen.append(name)",
        "    if not again and _record.raising:\n        _record.seen.append(name)",
        ("tests/system/test_signal_sweep.py::test_a_signal_at_any_moment_gives_incomplete_and_no_certified_file[SIGTERM]",)),
    "certificate-unsigned": M(
        "certify writes its certificate unsigned", "rmpeer/run/outputs.py",
        '        write_file(path, signed_text(result.to_dict()), what="the certificate")',
        '        write_file(path, __import__("json").dumps(result.to_dict(), default=str), what="the certificate")',
        ("tests/system/test_shared_host_trust.py::test_a_run_beside_planted_temporary_names_writes_only_its_own_files",)),
    # -- found since (mutant hunt 5: the judge) ----------------------------------------------------
    "end-link-reading-refusal-passes": M(
        "a link reading RM refused at the run's end passes (caps) or says the links were disabled (status)",
        "rmpeer/judge/verdict.py",
        '    refused = after.get("reason") if after.get("reason") != NO_NVLINK else None',
        "    refused = None",
        ("tests/judge/test_verdict.py::test_a_link_reading_rm_refused_at_the_runs_end_is_never_a_pass",)),
    "passive-reason-cut-at-300-said-twice": M(
        "a passive check's reason cut at exactly 300 characters is not read as its finding: said twice",
        "rmpeer/judge/verdict.py", "ELLIPSIS) else reason if len(reason) >= REASON_CHARS else None",
        "ELLIPSIS) else reason if len(reason) > REASON_CHARS else None",
        ("tests/judge/test_reasons_once.py::test_a_passive_finding_longer_than_its_checks_reason_is_one_reason",)),
    "boost-lowered-one-mhz-passes": M(
        "a boost that left a card's graphics clock 1 MHz below idle passes", "rmpeer/judge/verdict.py",
        ' and now < before and not events(r, "cap"):', ' and now < before - 1 and not events(r, "cap"):',
        ("tests/judge/test_verdict.py::test_a_boost_rm_accepted_that_lowered_the_clocks_degrades",)),
    # hunt6-a: judge/passive, judge/unchecked, judge/freshness
    "unread-proc-gpu-list-is-info": M(
        "the kernel module's GPU list not read is an INFO note, not a check that could not tell",
        "rmpeer/judge/passive.py",
        '"the kernel module\'s list of GPUs", "not recorded", UNFINISHED))',
        '"the kernel module\'s list of GPUs", "not recorded", INFO))',
        ("tests/judge/test_judge_passive.py::test_a_reading_the_passive_run_could_not_make_is_incomplete_never_a_pass",)),
    "unread-clocks-are-info": M(
        "clocks the passive run could not read are an INFO note, not a check that could not tell",
        "rmpeer/judge/passive.py",
        '"not read (see the rm finding)",\n                        UNFINISHED)',
        '"not read (see the rm finding)",\n                        INFO)',
        ("tests/judge/test_judge_passive.py::test_a_reading_the_passive_run_could_not_make_is_incomplete_never_a_pass",)),
    "clocks-without-mhz-pass": M(
        "a card whose clocks NVML did not give passes the passive clocks check", "rmpeer/judge/passive.py",
        '        if r.get("graphics_mhz") is None:', "        if False:",
        ("tests/judge/test_judge_passive.py::test_a_reading_the_passive_run_could_not_make_is_incomplete_never_a_pass",)),
    "process-list-without-available-passes": M(
        "a GPU-process reading that does not say it is available passes", "rmpeer/judge/passive.py",
        '    if not procs.get("available"):', '    if procs.get("available") is False:',
        ("tests/judge/test_judge_passive.py::test_a_reading_the_passive_run_could_not_make_is_incomplete_never_a_pass",)),
    "valid-for-of-366-days-refused": M(
        "--valid-for 366d, the documented most, is refused", "rmpeer/judge/freshness.py",
        "    if seconds > MAX_VALID_FOR_S:", "    if seconds >= MAX_VALID_FOR_S:",
        ("tests/judge/test_judge_freshness.py::test_valid_for_holds_up_to_366_days_and_no_longer",)),
    "valid-for-most-365-days": M(
        "--valid-for's most is 365 days, not the documented 366", "rmpeer/judge/freshness.py",
        "MAX_VALID_FOR_S = 366 * 86400", "MAX_VALID_FOR_S = 365 * 86400",
        ("tests/judge/test_judge_freshness.py::test_valid_for_holds_up_to_366_days_and_no_longer",)),
    "not-recorded-fingerprint-value-matches-itself": M(
        "a fingerprint value a recording did not hold matches the same in the certificate", "rmpeer/judge/freshness.py",
        'value.startswith(("unreadable", "not recorded"))', 'value.startswith("unreadable")',
        ("tests/judge/test_judge_freshness.py::test_a_value_a_recording_did_not_hold_matches_nothing_itself_included",)),
    'both-directions-floor-by-card-order': M(
        "a both-directions figure naming the higher card first is judged by no pair's floor", 'rmpeer/judge/floors.py',
        'floors.bidirectional.get((min(a, b), max(a, b)), floors.bidirectional.get(ANY))',
        'floors.bidirectional.get((a, b), floors.bidirectional.get(ANY))',
        ('tests/judge/test_floors.py::test_both_directions_of_a_pair_are_judged_by_its_floor_whichever_card_is_named_first',)),
    'one-direction-judged-by-the-other': M(
        'a one-way figure is judged by the floor of the other direction', 'rmpeer/judge/floors.py',
        'floors.cross_card.get((a, b), floors.cross_card.get(ANY))',
        'floors.cross_card.get((b, a), floors.cross_card.get(ANY))',
        ('tests/judge/test_floors.py::test_one_direction_is_judged_by_its_own_floor',)),
    'outlier-at-exactly-15-percent': M(
        'a pair exactly 15% below its siblings is flagged (the rule is more than 15%)', 'rmpeer/judge/floors.py',
        'if f["gbps"] < middle * (1 - OUTLIER_BELOW):',
        'if f["gbps"] <= middle * (1 - OUTLIER_BELOW):',
        ('tests/judge/test_floors.py::test_a_pair_is_an_outlier_only_more_than_15_percent_below_its_siblings',)),
    'outlier-threshold-16-percent': M(
        'a pair is flagged only more than 16% below its siblings', 'rmpeer/judge/floors.py',
        'OUTLIER_BELOW = 0.15',
        'OUTLIER_BELOW = 0.16',
        ('tests/judge/test_floors.py::test_a_pair_is_an_outlier_only_more_than_15_percent_below_its_siblings',)),
    'no-floors-drops-the-calibrated-entry': M(
        "--no-floors drops a calibrated entry's floors from what the host is judged by", 'rmpeer/judge/floors.py',
        'return (base if calibrated is not None else None), [absent] if absent else []',
        'return None, [absent] if absent else []',
        ('tests/judge/test_derived.py::test_a_calibrated_entry_comes_first_and_no_floors_keeps_only_it',)),
    'certificate-drops-what-was-not-derived': M(
        "the certificate's floors leave out what could not be derived", 'rmpeer/judge/floors.py',
        'out["floors"], out["missing"] = each, list(self.missing)',
        'out["floors"], out["missing"] = each, []',
        ('tests/judge/test_floors.py::test_the_certificate_keeps_what_could_not_be_derived',)),
    'derived-floors-matched-by-nothing': M(
        'floors no topology entry calibrates are not said matched_by derived', 'rmpeer/judge/floors.py',
        '"matched_by": spec.topology_matched_by if entry is not None else "derived"',
        '"matched_by": spec.topology_matched_by',
        ('tests/judge/test_floors.py::test_floors_no_entry_calibrates_are_matched_by_derived',)),
    'fabric-skip-needs-the-fabric': M(
        'a fabric state of SKIP makes the fabric facts matter', 'rmpeer/judge/health.py',
        'if _read(fabric) and fabric.get("state") not in ("SKIP",):',
        'if _read(fabric):',
        ('tests/judge/test_judge_health.py::test_a_fabric_state_of_skip_needs_no_fabric',)),
    'refused-fabric-probe-unsaid': M(
        'a fabric probe RM refused on a host that needs the fabric is not said unchecked', 'rmpeer/judge/health.py',
        '        _unread("fabric-probe", subject, fact, needed, out, not_checked)',
        '        _unread("fabric-probe", subject, fact, False, out, not_checked)',
        ('tests/judge/test_judge_health.py::test_a_fabric_state_of_skip_needs_no_fabric',)),
    'route-update-unjudged': M(
        'a fabric route update in progress (ROUTE_UPDATE TRUE) passes', 'rmpeer/judge/health.py',
        '                "ROUTE_UPDATE": "a fabric route update is in progress"}',
        '}',
        ('tests/judge/test_judge_health.py::test_each_row_gives_its_severity[fabric-route-update]',)),
    'ecc-disabled-unrecorded': M(
        'ECC disabled is not recorded', 'rmpeer/judge/health.py',
        '    if fact.get("units_supported") and not fact.get("enabled"):',
        '    if False:',
        ('tests/judge/test_judge_health.py::test_ecc_disabled_is_recorded_not_judged',)),
    'health-judges-the-first-card-only': M(
        "the health judge judges only the first card's facts", 'rmpeer/judge/health.py',
        '    for c in cards:\n        _card(',
        '    for c in cards[:1]:\n        _card(',
        ('tests/judge/test_judge_health.py::test_every_card_is_judged_not_only_the_first',)),
    'card-fail-ranks-below-degrade': M(
        "a card's NOT CERTIFIED ranks below its DEGRADED", 'rmpeer/judge/cards.py',
        'RANK = {FAIL: (3, NOT_CERTIFIED)',
        'RANK = {FAIL: (1, NOT_CERTIFIED)',
        ('tests/judge/test_cards.py::test_a_card_that_failed_and_degraded_is_not_certified',)),
    'copy-not-run-shown-failed': M(
        "a copy that was not run (ok None) shows as its pair's failed column", 'rmpeer/judge/cards.py',
        'if p.src_card != p.dst_card and p.ok is not None',
        'if p.src_card != p.dst_card',
        ('tests/judge/test_cards.py::test_a_copy_that_was_not_run_gives_its_pair_no_column',)),
    'finding-of-an-unknown-card-makes-a-pair': M(
        'a finding naming a card the run does not have makes a pair (and by_card raises IndexError)', 'rmpeer/judge/cards.py',
        '        elif kind == "pair" and max(key) < len(hosts):',
        '        elif kind == "pair":',
        ('tests/judge/test_cards.py::test_a_finding_about_a_card_the_run_does_not_have_blames_no_pair',)),
    # hunt6-b: judge/sharedhost, run/assemble, render/verdict
    "own-video-memory-of-some-cards-taken-as-complete": M("the teardown takes a per-process reading that lacks a card for a complete one (and raises KeyError instead of judging host-wide)",
        "rmpeer/judge/sharedhost.py",
        'all(c in readings[ph]["bytes"] for c in cards) for ph in phases)',
        'any(c in readings[ph]["bytes"] for c in cards) for ph in phases)',
        ("tests/judge/test_sharedhost.py::test_a_per_process_reading_that_lacks_a_card_leaves_the_host_wide_figure_to_judge",)),
    "host-wide-reading-missing-a-phase-is-used": M("the teardown uses a host-wide reading with a phase unread (raises instead of failing: readings found none)",
        "rmpeer/judge/sharedhost.py",
        "    if host is None or any(host.get(ph) is None for ph in phases):", "    if host is None:",
        ("tests/judge/test_sharedhost.py::test_a_host_wide_reading_missing_one_phase_is_no_reading",)),
    "floor-finding-blames-only-its-source-cards-user": M("a bandwidth finding dict names only the user of its source card, never of its destination",
        "rmpeer/judge/sharedhost.py",
        '            return {int(f["src_card"]), int(f["dst_card"])}', '            return {int(f["src_card"])}',
        ("tests/judge/test_sharedhost.py::test_a_finding_dict_naming_its_cards_names_a_user_of_either_card",)),
    "require-idle-counts-other-jobs-cards": M("--require-idle of a run of some cards counts the processes on another job's cards",
        "rmpeer/judge/sharedhost.py",
        'count_for_idle(reading.get("processes", []), selection)', 'count_for_idle(reading.get("processes", []), None)',
        ("tests/judge/test_sharedhost.py::test_require_idle_of_a_run_of_some_cards_ignores_another_jobs_card",)),
    "another-cards-holder-excuses-the-no-pair-check": M("a driver client holding only another card's node is taken to hold the pair's mapping: the no-pair check is excused (not applicable) instead of failing",
        "rmpeer/judge/sharedhost.py",
        "(p.driver and not p.cards and not p.minors)", "(p.driver and not p.cards)",
        ("tests/judge/test_sharedhost.py::test_a_driver_client_holding_another_cards_node_cannot_pair_these_cards",)),
    "more-free-memory-after-teardown-passes": M("host-wide free memory higher after teardown than before passes as back where it was",
        "rmpeer/judge/sharedhost.py",
        "        elif a[c] != b[c]:", "        elif a[c] < b[c]:",
        ("tests/judge/test_sharedhost.py::test_more_free_memory_after_teardown_than_before_is_not_back_where_it_was",)),
    "verdict-line-says-and-0-more-cards": M("the verdict line adds 'and 0 more cards' when exactly three cards are to blame",
        "rmpeer/render/verdict.py",
        "    if len(bad_cards) > SHOWN:", "    if len(bad_cards) >= SHOWN:",
        ("tests/render/test_render_verdict.py::test_three_bad_cards_are_all_shown_and_more_are_counted",)),
    "verdict-line-counts-the-shown-cards-as-more": M("the verdict line's 'and N more cards' counts the cards it already showed",
        "rmpeer/render/verdict.py",
        'tail.append(f"and {len(bad_cards) - SHOWN} more cards")', 'tail.append(f"and {len(bad_cards)} more cards")',
        ("tests/render/test_render_verdict.py::test_three_bad_cards_are_all_shown_and_more_are_counted",)),
    "verdict-line-ellipsis-after-eight-pairs": M("the verdict line ends eight bad pairs with ', ...' though none is left out",
        "rmpeer/render/verdict.py",
        '(", ..." if len(bad_pairs) > 8 else "")', '(", ..." if len(bad_pairs) >= 8 else "")',
        ("tests/render/test_render_verdict.py::test_eight_bad_pairs_are_named_and_a_ninth_is_an_ellipsis",)),
    "verdict-line-shows-an-empty-uuid": M("a card without a known uuid is shown as 'card N ()'",
        "rmpeer/render/verdict.py",
        "{c['uuid'] or 'uuid unknown'}", "{c['uuid']}",
        ("tests/render/test_render_verdict.py::test_a_card_without_a_uuid_says_so",)),
    "cut-short-card-with-its-own-fault-unblamed": M("a card INCOMPLETE for a reason of its own as well as the cut-short run is not named by the verdict line",
        "rmpeer/render/verdict.py",
        'row["verdict"] == INCOMPLETE and row["reasons"] != [CUT_SHORT])', 'row["verdict"] == INCOMPLETE and CUT_SHORT not in row["reasons"])',
        ("tests/render/test_render_verdict.py::test_a_card_incomplete_for_its_own_reason_as_well_as_the_cut_short_run_is_blamed",)),
    "json-share-keeps-every-reason": M("the JSON line's per-card share keeps every reason, not the first three",
        "rmpeer/render/verdict.py",
        '{"reasons": row["reasons"][:SHOWN]}', '{"reasons": row["reasons"]}',
        ("tests/render/test_render_verdict.py::test_the_json_share_keeps_three_reasons_of_a_bad_card_and_none_of_a_certified_one",)),
    "json-share-gives-a-certified-card-reasons": M("the JSON line gives a CERTIFIED card a reasons field",
        "rmpeer/render/verdict.py",
        'if row["verdict"] != CERTIFIED else {})', 'if True else {})',
        ("tests/render/test_render_verdict.py::test_the_json_share_keeps_three_reasons_of_a_bad_card_and_none_of_a_certified_one",)),
    "json-share-drops-how-the-cards-were-chosen": M("the JSON line's selection leaves out how the cards were chosen",
        "rmpeer/render/verdict.py",
        ', "how": sel.get("how")}', '}',
        ("tests/render/test_render_verdict.py::test_the_json_share_says_how_the_cards_were_chosen",)),
    "verdict-line-names-every-bad-pair": M("the verdict line names every bad pair, however many (and then an ellipsis)",
        "rmpeer/render/verdict.py",
        'for p in bad_pairs[:8])', 'for p in bad_pairs)',
        ("tests/render/test_render_verdict.py::test_eight_bad_pairs_are_named_and_a_ninth_is_an_ellipsis",)),
    # hunt7: run/assemble (each survived tests/run, tests/judge, tests/render and
    # tests/cli/test_certify_input.py before tests/run/test_assemble.py)
    "deadline-ending-is-info": M("a run its deadline ended is judged on the checks before it: INFO, not INCOMPLETE",
        "rmpeer/run/assemble.py", '"by the process\'s exit", UNFINISHED)],', '"by the process\'s exit", "info")],',
        ("tests/run/test_assemble.py::test_a_run_its_deadline_ended_is_incomplete_and_keeps_the_checks_before_it",)),
    "deadline-result-without-host": M("the deadline's certificate leaves out which host it is of",
        "rmpeer/run/assemble.py", 'host=spec.facts.as_dict() if spec.facts else {}, checks=list(checks),',
        'host={}, checks=list(checks),',
        ("tests/run/test_assemble.py::test_a_run_its_deadline_ended_is_incomplete_and_keeps_the_checks_before_it",)),
    "signal-after-the-checks-is-info": M("a signal after the checks is only noted: the run stays CERTIFIED",
        "rmpeer/run/assemble.py", 'f"it was stopped by {name} after its checks", UNFINISHED)]))',
        'f"it was stopped by {name} after its checks", "info")]))',
        ("tests/run/test_assemble.py::test_a_signal_after_the_checks_turns_a_finished_run_incomplete",)),
    "signal-stopped-run-is-info": M("a run a signal stopped is judged on the checks it ran: INFO, not INCOMPLETE",
        "rmpeer/run/assemble.py", 'f"it was stopped by {stopped}", UNFINISHED))', 'f"it was stopped by {stopped}", "info"))',
        ("tests/run/test_assemble.py::test_a_run_a_signal_stopped_is_incomplete_and_names_the_signal",)),
    "fitness-finding-said-twice": M("a fitness finding the host run already holds is added again (said twice in the reasons)",
        "rmpeer/run/assemble.py", 'findings += [f for f in host.fitness_findings() if f not in findings]',
        'findings += list(host.fitness_findings())',
        ("tests/run/test_assemble.py::test_the_fitness_findings_a_host_run_already_holds_are_not_added_twice",)),
    "valid-for-not-applied": M("--valid-for is ignored: a quick or full certificate holds for the default 24 h",
        "rmpeer/run/assemble.py", 'valid_until=_valid_until(spec, started), ran_because',
        'valid_until=valid_until(started, parse_valid_for(None)), ran_because',
        ("tests/run/test_assemble.py::test_valid_for_sets_valid_until",)),
    "health-findings-said-last": M("the health facts' findings come after the check failures they explain",
        "rmpeer/run/assemble.py", 'findings[:0] = health_findings(made["host"], kind)[0]',
        'findings += health_findings(made["host"], kind)[0]',
        ("tests/run/test_assemble.py::test_the_health_findings_come_first_in_the_reasons",)),
    "expected-topology-not-judged": M("a host that is not the --expect-topology entry is not failed for it",
        "rmpeer/run/assemble.py", 'for problem in spec.topology_problems()]', 'for problem in []]',
        ("tests/run/test_assemble.py::test_a_host_that_is_not_the_topology_asked_for_is_not_certified",)),
    "ran-because-not-kept": M("the certificate of a run --if-stale started no longer says why it ran",
        "rmpeer/run/assemble.py", 'valid_until=_valid_until(spec, started), ran_because=list(spec.outputs.ran_because),',
        'valid_until=_valid_until(spec, started), ran_because=[],',
        ("tests/run/test_assemble.py::test_the_certificate_says_why_it_ran_and_which_layouts_it_left_out",)),
    "left-out-layouts-not-kept": M("the certificate no longer names the layouts the target could not run",
        "rmpeer/run/assemble.py", 'left_out=list(spec.left_out), layouts', 'left_out=[], layouts',
        ("tests/run/test_assemble.py::test_the_certificate_says_why_it_ran_and_which_layouts_it_left_out",)),
    # issue 44: one fault, one reason; the outputs agree with the certificate
    "cause-not-grouped": M("findings that share a cause are said one reason each again",
        "rmpeer/judge/verdict.py", 'key = ("cause", f.cause) if f.cause else', 'key = ("cause", f.cause) if False else',
        ("tests/judge/test_root_causes.py::test_findings_of_one_cause_are_counted_and_others_stay_apart",)),
    "byte-check-cause-dropped": M("a byte check's finding no longer carries its diagnosis's cause",
        "rmpeer/run/hostrun.py", 'FAIL, cause=(m or {}).get("cause", ""))', 'FAIL)',
        ("tests/judge/test_root_causes.py::test_wrong_memory_in_every_window_is_one_reason_of_32_checks",)),
    "prometheus-valid-until-is-the-start": M("Prometheus's certificate expiry is the run's start",
        "rmpeer/render/prometheus.py", 'until = _epoch(result.valid_until or "")', 'until = _epoch(result.started or "")',
        ("tests/render/test_outputs_agree.py::test_prometheus_is_the_certificates",)),
    # issue 47: a planted certificate, a validity that rounds to nothing
    "planted-mac-compared-as-text": M("a signature's mac is compared as text: a non-ASCII one raises and stops the sweep",
        "rmpeer/machine/signing.py", 'hmac.compare_digest(sig["mac"].encode("utf-8", "surrogatepass"), _mac(key, doc).encode())',
        'hmac.compare_digest(sig["mac"], _mac(key, doc))',
        ("tests/fleet/test_fleet_input.py::test_a_planted_signature_that_is_not_ascii_makes_its_node_an_error_and_the_sweep_goes_on",)),
    "valid-for-under-a-second-accepted": M("a --valid-for under a minute is accepted (under a second: the 24 h default)",
        "rmpeer/judge/freshness.py", "MIN_VALID_FOR_S = 60\n", "MIN_VALID_FOR_S = 0\n",
        ("tests/judge/test_judge_freshness.py::test_a_validity_under_a_minute_is_refused_never_the_default_24_hours",)),
    "cards-env-of-no-variable-is-every-card": M("--cards-env ',,' names no variable and the run takes every card",
        "rmpeer/machine/selection.py", "    if env is not None and not variables:\n", "    if False:\n",
        ("tests/cli/test_hostile_options.py::test_a_bad_option_is_exit_2_in_one_line_and_leaves_nothing",)),
    "sweep-time-zero-accepted": M("fleet sweep --time 0 is written as Slurm's 'no time limit'",
        "rmpeer/cli/fleet.py", "    if value < 1:\n", "    if value < 0:\n",
        ("tests/cli/test_hostile_options.py::test_a_bad_option_is_exit_2_in_one_line_and_leaves_nothing",)),
    "fleet-files-checks-as-it-writes": M("fleet files checks each name only as it writes it: a planted link stops it half-installed",
        "rmpeer/fleet/files.py", '        writable("fleet files DIR", copy, folder=False)\n', "        pass\n",
        ("tests/fleet/test_fleet_input.py::test_fleet_files_checks_every_name_before_writing_any",)),
    "calibrate-trusts-any-signature": M("calibrate --from makes floors of a certificate changed after it was signed",
        "rmpeer/cli/calibrate.py", "    if not trust.verified:\n", "    if False:\n",
        ("tests/cli/test_calibrate.py::test_calibrate_refuses_a_certificate_changed_after_it_was_signed",)),
    "calibrate-believes-the-verdict": M("calibrate --from believes a verdict its findings do not give",
        "rmpeer/cli/calibrate.py", '    problem = unfollowed(RunResult.from_dict(doc))\n', "    problem = None\n",
        ("tests/cli/test_calibrate.py::test_calibrate_refuses_a_verdict_its_findings_do_not_give",)),
    "slices-drop-the-last-partial-slice": M("a block's last partial slice is never filled, copied or compared",
        "rmpeer/machine/slices.py", "range(0, total, size)))", "range(0, total - total % size or total, size)))",
        ("tests/traffic/test_bytecheck.py::test_a_block_of_any_size_is_checked_to_its_last_byte",)),
    "view-runs-unchecked": M("a read-back record's runs are not checked: 'garbage' fails mid-run instead of exit 2",
        "rmpeer/shim/records.py", "    if not isinstance(runs, list):\n", "    if False:\n",
        ("tests/system/test_never_drain.py::test_a_tool_error_is_its_documented_code_in_one_line",)),
    "blank-lines-unbounded": M("a flood of blank lines is read line by line to the size bound",
        "rmpeer/shim/records.py", "                    if blank > MAX_BLANK:\n", "                    if False:\n",
        ("tests/system/test_never_drain.py::test_a_tool_error_is_its_documented_code_in_one_line",)),
    "label-hashes-a-refused-certificate": M("fleet label hashes a certificate the collector refused (a planted link's target)",
        "rmpeer/fleet/label.py", "    # a certificate the collector did not read",
        "    if outcome.certificate and outcome.certificate.is_file():\n"
        "        return 'sha256-' + __import__('hashlib').sha256(outcome.certificate.read_bytes()).hexdigest()[:32]\n"
        "    # a certificate the collector did not read",
        ("tests/fleet/test_fleet_input.py::test_fleet_label_reads_nothing_through_a_planted_certificate_link",)),
    "sweep-takes-a-shallower-tier": M("a full-tier sweep takes a quick or passive certificate as a pass",
        "rmpeer/fleet/collect.py", "    if asked in TIERS:", "    if False:",
        ("tests/fleet/test_fleet_input.py::test_a_result_that_is_not_this_sweeps_is_no_pass",)),
    "label-ignores-run-ids": M("fleet label takes a status.json of an earlier run as this sweep's",
        "rmpeer/fleet/label.py", "    outcomes, _ = gather(shared)", "    outcomes = __import__('rmpeer.fleet.checks').fleet.checks.load_sweep(shared)",
        ("tests/fleet/test_fleet_input.py::test_a_result_that_is_not_this_sweeps_is_no_pass",)),
    "diff-ignores-another-order": M("diff takes the same statuses of a step in another order for the same behaviour",
        "rmpeer/diff/compare.py",
        '            statuses.differences.append((label, "order: " + " ".join(sa[:6]), "order: " + " ".join(sb[:6])))',
        "            pass",
        ("tests/diff/test_compare.py::test_a_behaviour_change_between_two_recordings_is_named",)),
    "allure-verdict-always-passed": M("the report's verdict result is green whatever the verdict",
        "rmpeer/render/entries.py", 'NOT_CERTIFIED: FAILED, DEGRADED: BROKEN', 'NOT_CERTIFIED: PASSED, DEGRADED: PASSED',
        ("tests/render/test_outputs_agree.py::test_allure_states_the_verdict_and_counts_the_certificates_checks",)),
    "allure-check-status-ignored": M("the report draws a failed check as passed",
        "rmpeer/render/allure.py", '{"passed": PASSED, "failed": FAILED,', '{"passed": PASSED, "failed": PASSED,',
        ("tests/render/test_outputs_agree.py::test_every_check_is_one_allure_result_titled_and_judged_as_the_certificate_says",)),
    "set-up-alone-is-a-passed-check": M("a test cut between its set-up and its call counts as a passed check",
        "rmpeer/pytest_plugin/results.py", '            if t["outcome"] == "passed" and "call" not in t.get("phases", ("call",)):',
        "            if False:",
        ("tests/render/test_outputs_agree.py::test_allure_states_the_verdict_and_counts_the_certificates_checks",)),
    "deadline-result-without-layouts": M("a run cut by its deadline forgets the layouts it built (its report's windows lose their cards)",
        "rmpeer/run/assemble.py", "checks=list(checks), layouts=list(layouts),", "checks=list(checks),",
        ("tests/render/test_outputs_agree.py::test_every_check_is_one_allure_result_titled_and_judged_as_the_certificate_says",)),
    "quick-measures-every-pair": M("the quick tier measures every card pair's bandwidth on 8 cards (not its ring neighbours)",
        "rmpeer/traffic/bandwidth.py", '    if tier != "quick" or cards <= 2:', "    if True:",
        ("tests/traffic/test_bandwidth.py::test_the_quick_tier_measures_each_card_with_its_ring_neighbours",)),
    "diff-any-missing-family-is-an-older-rmpeers": M("diff takes any step family one side lacks for one its rmpeer never made",
        "rmpeer/diff/compare.py", "    if family in side.unmade:\n        return True", "    if True:\n        return True",
        ("tests/diff/test_diff_versions.py::test_a_family_both_rmpeers_made_deleted_from_one_side_differs",)),
    "diff-ignores-the-family-table": M("diff knows nothing of what an older rmpeer made: a newer recording's health steps differ",
        "rmpeer/diff/load.py", "    return {f for f, first in table.items() if first > str(created) and f not in made}",
        "    return set()",
        ("tests/diff/test_diff_versions.py::test_a_family_an_older_rmpeer_never_made_is_named_and_not_a_difference",)),
    "diff-skips-a-bandwidth-row-of-another-kind": M("diff leaves out a bandwidth figure of a kind rmpeer never writes (SAME BEHAVIOUR)",
        "rmpeer/diff/load.py", "            if key in row and (not isinstance(value, kind) or isinstance(value, bool)):",
        "            if False:",
        ("tests/diff/test_diff_input.py::test_a_bandwidth_figure_of_another_kind_is_refused_not_left_out",)),
    "drift-never-warns": M("a figure fallen far below this host's own median is never said",
        "rmpeer/judge/drift.py", "            if median > 0 and value < median * (1 - margin):", "            if False:",
        ("tests/judge/test_drift.py::test_a_figure_fallen_from_the_hosts_median_is_named_with_the_drop_and_since_when",)),
    "drift-fails-ignored": M("--drift-fails leaves a drift a warning: the host stays CERTIFIED",
        "rmpeer/judge/drift.py", "    severity = DEGRADE if fails else INFO", "    severity = INFO",
        ("tests/judge/test_drift.py::test_a_warning_never_changes_the_verdict_and_is_said_under_it",)),
    "result-left-loose": M("a RunResult's lists and dicts stay writable once assembled: a renderer can change "
                           "what the next output renders", "rmpeer/model/result.py",
        "                object.__setattr__(self, f.name, frozen(value))", "                pass",
        ("tests/model/test_frozen.py::test_an_assembled_result_refuses_every_write[a list field]",)),
    "require-complete-judged-twice": M("--require-complete judges the run a second time with its refusals added",
        "rmpeer/run/assemble.py", "    verdict, reasons, refusing = judge(result, require_complete)\n",
        "    verdict, reasons, refusing = judge(result, require_complete)\n"
        "    verdict, reasons, _ = judge(replace(result, findings=[*result.findings, *refusing]))\n",
        ("tests/system/test_run_path.py::test_require_complete_is_one_judgement",)),
    "fleet-node-takes-any-certificate-at-its-path": M(
        "fleet node takes whatever certificate lies at the path certify named, its id unchecked",
        "rmpeer/fleet/node.py",
        '    same = isinstance(data, dict) and data.get("certificate_id") == ran.result.certificate_id',
        "    same = isinstance(data, dict)",
        ("tests/fleet/test_node.py::test_a_certificate_replaced_after_the_run_is_no_verdict",)),
    "quick-extent-on-every-host": M("the quick tier's smaller extent applies on 2 cards too (its recordings no "
                                    "longer cover quick)", "rmpeer/tables/layouts.py",
        '        if tier == "quick" and layout.quick_extent and host_cards >= (layout.quick_from_cards or 1):',
        '        if tier == "quick" and layout.quick_extent:',
        ("tests/run/test_spec.py::test_the_quick_tier_on_many_cards_runs_interleaved_at_its_quick_extent",)),
    "sweep-record-fifo-ignored": M("a FIFO or folder at sweep.json passes for no record: run ids and tiers go "
                                   "unchecked", "rmpeer/fleet/collect.py", "    if os.path.lexists(shared / SWEEP):",
        "    if (shared / SWEEP).is_file() or (shared / SWEEP).is_symlink():",
        ("tests/fleet/test_fleet_input.py::test_a_sweep_record_that_is_no_regular_file_is_exit_2_not_ignored",)),
    "status-word-makes-a-stand-in": M("status.json's stand_in word alone lets a live quick certificate pass a full "
                                      "sweep", "rmpeer/fleet/collect.py",
        "            stand_in = tier is not None and o.result.is_replay and bool(read_status(shared / node).get(\"stand_in\"))",
        "            stand_in = bool(read_status(shared / node).get(\"stand_in\"))",
        ("tests/fleet/test_fleet_input.py::test_a_status_saying_stand_in_makes_no_live_certificate_a_replay",)),
    "drain-reason-sends-controls": M("a certificate's control characters reach Slurm's drain reason raw",
        "rmpeer/fleet/outcome.py",
        '    return short(escaped(" ".join(f"{REASON_PREFIX} {check}: {detail}".split())), REASON_LIMIT)',
        '    return short(f"{REASON_PREFIX} {check}: {detail}", REASON_LIMIT)',
        ("tests/fleet/test_fleet_input.py::test_a_certificates_control_characters_never_reach_a_drain_reason",)),
    "history-unbounded": M("the history keeps every run: the file grows without bound",
        "rmpeer/machine/history.py", "    targets[target] = (runs + [entry])[-MAX_RUNS:]", "    targets[target] = runs + [entry]",
        ("tests/judge/test_drift.py::test_the_history_is_bounded_and_oldest_first",)),
    "live-shim-reads-the-status-early": M("the live shim reads RM's status 4 bytes before its field",
        "rmpeer/shim/live.py", "            st = status_of(struct.get(after, status_field))",
        "            at = struct.field(status_field).offset\n"
        "            st = status_of(int.from_bytes(after[at - 4:at], 'little'))",
        ("tests/shim/test_live_replies.py::test_the_live_shim_reads_every_recorded_reply_as_rm_gave_it",)),
    "history-keeps-idle-clock-runs": M("a --no-boost run joins the history and pulls the median down",
        "rmpeer/run/execute.py", "    if not spec.boost or result.verdict == INCOMPLETE:", "    if result.verdict == INCOMPLETE:",
        ("tests/judge/test_drift.py::test_a_live_run_is_compared_then_kept_and_a_no_boost_run_only_compared",)),
    "verdict-line-unbounded": M("the verdict line's card reasons are no longer bounded by its 400 characters",
        "rmpeer/render/verdict.py", "room = max(CARD_REASON_MIN, min(CARD_REASON_CHARS,", "room = max(1000, min(CARD_REASON_CHARS,",
        ("tests/render/test_render_verdict.py::test_the_verdict_line_is_at_most_400_characters_and_cuts_no_word",)),
    "step-family-undeclared": M("code makes a step of a new family (ce:user-mode) that no module declares: the "
                                "manifest would not know it, and diff would take it for a step older rmpeers made",
        "rmpeer/ce/engine.py", 'label=f"ce:s{s}:usermode"', 'label=f"ce:s{s}:user-mode"',
        ("tests/model/test_manifest.py::test_a_recording_header_and_a_certificate_carry_the_manifest",)),
    "busy-card-boost-judged": M("a boost below the idle sample on a card another job held stays DEGRADED, "
                                "unexplained", "rmpeer/judge/sharedhost.py",
        "        elif f.check in CLOCK_CHECKS and _MHZ.search(f.expected) and f.severity != INFO:", "        elif False:",
        ("tests/judge/test_sharedhost.py::test_a_boost_below_a_busy_card_s_idle_sample_is_not_judged_and_names_the_process",)),
    "busy-card-hides-rm-refusal": M("on a card another job held, RM's refusal of the boost is not judged either",
        "rmpeer/judge/sharedhost.py",
        "        elif f.check in CLOCK_CHECKS and _MHZ.search(f.expected) and f.severity != INFO:",
        "        elif f.check in CLOCK_CHECKS and f.severity != INFO:",
        ("tests/judge/test_sharedhost.py::test_a_boost_below_a_busy_card_s_idle_sample_is_not_judged_and_names_the_process",)),
    "clock-finding-card-unread": M("a clock finding's card is never read, so the job on it is never named",
        "rmpeer/judge/sharedhost.py", 'if getattr(f, "check", "") in CLOCK_CHECKS and (one := _CARD.fullmatch(text)):',
        'if False and (one := _CARD.fullmatch(text)):',
        ("tests/judge/test_sharedhost.py::test_a_busy_card_s_unjudged_boost_is_listed_as_not_checked",)),
    "live-read-at-the-mapping-start": M("the live shim reads a mapping's words from its start, whatever the offset",
        "rmpeer/shim/live.py", "        data = bytes(ffi.buffer(self._ptr + offset, n))",
        "        data = bytes(ffi.buffer(self._ptr, n))", ("tests/shim/test_live_mappings.py::test_the_live_mappings_read_and_write_every_recorded_place_as_the_host_s_run_did",)),
    "live-wait-reads-the-next-word": M("the live shim polls the word after the semaphore",
        "rmpeer/shim/live.py", '        word = ffi.cast("volatile uint32_t *", self._ptr + offset)',
        '        word = ffi.cast("volatile uint32_t *", self._ptr + offset + 4)', ("tests/shim/test_live_mappings.py::test_the_live_mappings_read_and_write_every_recorded_place_as_the_host_s_run_did",)),
    "live-write-lands-elsewhere": M("the live shim's CPU writes land at half their offset",
        "rmpeer/shim/live.py", "        ffi.memmove(self._ptr + offset, data, len(data))",
        "        ffi.memmove(self._ptr + offset // 2, data, len(data))", ("tests/shim/test_live_mappings.py::test_the_live_mappings_read_and_write_every_recorded_place_as_the_host_s_run_did",)),
    "live-view-keeps-half-its-runs": M("the live shim records the word runs of half a read-back",
        "rmpeer/shim/live.py", "word_runs(block)", "word_runs(block[: n // 2])", ("tests/shim/test_live_mappings.py::test_the_live_mappings_read_and_write_every_recorded_place_as_the_host_s_run_did",)),
    "live-shim-ignores-the-reply": M("the live shim keeps the request it sent as RM's reply",
        "rmpeer/shim/live.py", "        after = top.read()", "        after = before",
        ("tests/shim/test_standin_live.py::test_a_live_run_on_a_recorded_host_certifies_as_its_replay",)),
    "prometheus-peer-by-the-runs-number": M("the Prometheus pair series name peer_gpu by the run's own card number on a subset run",
        "rmpeer/render/prometheus.py", 'ok.labels(**_card_labels(cards, src), peer_gpu=_card_labels(cards, dst)["gpu"])',
        "ok.labels(**_card_labels(cards, src), peer_gpu=str(dst))",
        ("tests/render/test_prometheus_mutants.py::test_a_subset_run_names_both_cards_of_a_pair_by_the_hosts_numbers",)),
    "diff-forgets-an-earlier-method": M("diff takes a recording made before a figure's method changed for one timed as today",
        "rmpeer/diff/load.py", "        if out.get(op) == method and created and str(created) < since:",
        "        if False:",
        ("tests/diff/test_diff_versions.py::test_a_figure_timed_on_one_card_s_clock_before_the_change_is_not_comparable",)),
    "diff-earlier-method-whenever": M("diff takes any recording without a manifest for one timed the earlier way",
        "rmpeer/diff/load.py", "        if out.get(op) == method and created and str(created) < since:",
        "        if out.get(op) == method:",
        ("tests/diff/test_diff_versions.py::test_a_figure_timed_on_one_card_s_clock_before_the_change_is_not_comparable",)),
    "slices-drop-the-tail-in-a-replay": M("a block's last partial slice is never compared: a replay of a real 10 MiB run "
                                          "with a flipped tail byte passes",
        "rmpeer/machine/slices.py", "range(0, total, size)))", "range(0, total - total % size or total, size)))",
        ("tests/traffic/test_tail_replay.py::test_a_flip_in_the_tail_slice_is_not_certified_naming_its_offset",)),
    "drift-warning-not-checked": M("a drift warning is listed as a check not made (refused by --require-complete)",
        "rmpeer/judge/unchecked.py", 'NOT_A_CHECK = {"state", *WARNING_CHECKS}', 'NOT_A_CHECK = {"state"}',
        ("tests/judge/test_unchecked.py::test_a_drift_warning_is_a_check_made_not_one_left_out",)),
    "boost-ignores-the-power-limit": M("a boost held at the card's power limit (SW power cap) degrades as a failed boost",
        "rmpeer/judge/verdict.py", ' and now < before and not events(r, "cap"):', " and now < before:",
        ("tests/judge/test_boost_power.py::test_a_boost_held_at_the_power_limit_is_what_the_card_can_reach",)),
    "boost-any-reason-excuses": M("any clock-event reason (the card idle) excuses a boost below the idle sample",
        "rmpeer/judge/verdict.py", ' and now < before and not events(r, "cap"):',
        " and now < before and not r.get(\"clock_events\"):",
        ("tests/judge/test_boost_power.py::test_the_same_drop_with_no_limit_named_still_degrades",)),
    "slowdown-never-judged": M("a hardware slowdown of the clocks passes unseen",
        "rmpeer/judge/verdict.py", "    out += slowdown_findings(fitness.clocks)\n", "",
        ("tests/judge/test_boost_power.py::test_a_hardware_slowdown_at_any_reading_degrades_naming_the_reason_and_the_reading",)),
    "diff-any-missing-step-is-the-tier-s": M("diff takes any step one side lacks for one its run's tier does not make",
        "rmpeer/diff/compare.py", '    if (_tier(side) == "passive") != (_tier(other) == "passive"):\n        return True',
        "    if True:\n        return True",
        ("tests/diff/test_diff_run_settings.py::test_the_same_passive_recording_claiming_a_deeper_tier_differs",)),
    "diff-boost-calls-never-compared": M("diff takes the boost calls one side lacks for a --no-boost run's, whatever its header says",
        "rmpeer/diff/compare.py", "    return family in BOOST_ONLY and _asked(side) is False and _asked(other) is True",
        "    return family in BOOST_ONLY",
        ("tests/diff/test_diff_run_settings.py::test_the_same_no_boost_recording_claiming_the_boost_differs",)),
    "diff-ignores-the-run-settings": M("diff calls a passive run's missing setup steps a difference",
        "rmpeer/diff/compare.py", "        if unrun_by:\n", "        if False:\n",
        ("tests/diff/test_diff_run_settings.py::test_a_passive_run_leaves_the_deeper_tier_s_steps_not_comparable_and_named",)),
    "diff-compares-a-figure-timed-two-ways": M("diff compares a figure one side timed ungated and the other gated",
        "rmpeer/diff/compare.py", "        if ma and mb and ma != mb:", "        if False:",
        ("tests/diff/test_diff_manifest.py::test_a_figure_timed_two_ways_is_not_comparable_and_says_how",)),
    "key-folder-lookup-crashes": M("a key folder that cannot be looked up (a file on the way) stops certify as an "
                                   "internal error (exit 5) instead of one line, exit 2", "rmpeer/machine/signing.py",
        '    except OSError as exc:      # a file where a folder should be on the way, a name too long\n'
        '        return f"it cannot be looked up ({exc.strerror or exc})"\n', "",
        ("tests/cli/test_certify_input.py::test_a_key_path_that_cannot_be_looked_up_is_exit_2_in_one_line",)),
    "shims-take-any-step": M("the live shim records a step of any family, declared or not", "rmpeer/shim/live.py",
        "        check_label(record.label)", "        pass",
        ("tests/model/test_manifest.py::test_the_shims_refuse_a_step_of_a_family_no_module_declares",)),
    "diff-ignores-the-manifest": M("diff takes a family a side's manifest lacks for one its rmpeer made",
        "rmpeer/diff/compare.py", "        return family not in made\n", "        return False\n",
        ("tests/diff/test_diff_manifest.py::test_each_family_one_side_s_rmpeer_does_not_make_is_not_comparable",)),
    "costmodel-rig-without-its-engines": M("the cost model prices the bandwidth rig's RM setup and copies but not its "
                                           "sessions' engines", "rmpeer/run/costmodel.py",
        '    return _setup_s(shape, c) + c["rig_per_session_s"] * shape["sessions"] + copies',
        "    return _setup_s(shape, c) + copies",
        ("tests/run/test_costmodel.py::test_the_model_reproduces_each_recorded_rig_stretch",)),
    "costmodel-engines-at-once-copy-once": M("the cost model prices a measure of engines copying at once as one copy, "
                                             "not a chain", "rmpeer/run/costmodel.py",
        '    return (CHAIN if op in ("bidirectional", "all") else 1) * n',
        "    return n",
        ("tests/run/test_costmodel.py::test_a_figures_copies_and_measures_worked_by_hand",)),
    "costmodel-recording-through-a-link": M("the cost model reads a recording in bench's --output through a link",
        "rmpeer/run/costmodel.py", "        header, lines = read_transcript(path, follow=False)",
        "        header, lines = read_transcript(path)",
        ("tests/run/test_costmodel.py::test_files_that_are_no_recording_give_no_stretch_and_never_stop_the_fit",)),
    "costmodel-fitness-rest-dropped": M("the cost model leaves out the fitness group's fixed reads",
        "rmpeer/run/costmodel.py", '            + c["fitness_rest_s"] + rig_seconds(cards, tier, c))',
        "            + rig_seconds(cards, tier, c))",
        ("tests/run/test_costmodel.py::test_the_fitness_part_of_a_run_is_the_logged_fitness_group_on_the_fitted_host",)),
    "nvml-clocks-ignores-the-started-reading": M("nvml_clocks asks nvidia-smi again, not the query started for it",
        "rmpeer/run/fitness.py", "    started = start_smi() if started is None else started",
        "    started = start_smi()",
        ("tests/run/test_nvml_clocks.py::test_a_started_reading_is_the_one_read_later",)),
    "records-hex-digits-of-any-count": M("a recording's request or reply of an odd count of hex digits is read",
        "rmpeer/shim/records.py",
        "        if not isinstance(value, str) or len(value) % 2 or not _HEX_DIGITS.fullmatch(value):",
        "        if not isinstance(value, str) or not _HEX_DIGITS.fullmatch(value):",
        ("tests/shim/test_records.py::test_a_request_or_reply_of_other_than_whole_hex_bytes_is_refused",)),
    "folder-writer-follows-links": M("a report's file is opened through a link or a FIFO at its name",
        "rmpeer/safewrite.py",
        "            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, self.mode,",
        "            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, self.mode,",
        ("tests/machine/test_folder_writer.py::test_a_link_planted_at_a_name_is_refused_and_what_it_points_to_is_untouched",)),
    "folder-writer-leaves-half-files": M("a report's file cut short mid-write is left behind",
        "rmpeer/safewrite.py",
        "                os.unlink(name, dir_fd=self.fd)     # never half a file left behind",
        "                pass",
        ("tests/machine/test_folder_writer.py::test_a_write_cut_short_leaves_no_half_file",)),
    "matrices-built-never-taken": M("a run parses every matrix although the wheel holds its parse",
        "rmpeer/tables/load.py", "    if hit is not None:", "    if False:",
        ("tests/tables/test_built_matrices.py::test_bytes_that_are_not_the_built_ones_are_parsed_from_their_yaml",)),
    "matrices-built-of-any-shape": M("a built file that is not a mapping of parses is used as one",
        "rmpeer/tables/load.py", "    return data if isinstance(data, dict) else {}", "    return data",
        ("tests/tables/test_built_matrices.py::test_a_built_file_that_cannot_be_read_leaves_every_matrix_parsed",)),
    "segment-leaves-the-traffic-to-the-first-transfer": M(
        "a check that moves bytes through layout_run alone has its layout's traffic built inside its own stretch",
        "rmpeer/pytest_plugin/plugin.py",
        '    return run.layout(case) if "traffic" in names or "layout_run" in names else None',
        '    return run.layout(case) if "traffic" in names else None',
        ("tests/shim/test_replay.py::test_the_unchanged_replay_passes",)),
    "session-never-closes-its-host-runs": M(
        "no finalizer closes the HostRuns at the session's end: the RM client, the boost and the recording's "
        "last stretch are left to the process's exit",
        "rmpeer/pytest_plugin/plugin.py", "        session.addfinalizer(lambda: _close_host_runs(session))",
        "        pass",
        ("tests/pytest_plugin/test_handover.py::test_every_host_run_is_closed_at_the_sessions_end",)),
    "segment-hands-over-nothing": M(
        "_segment hands a check none of its fixtures: pytest builds each one again for every check",
        "rmpeer/pytest_plugin/plugin.py", "    _hand_over(request.node, run, case, layout)\n",
        "",
        ("tests/pytest_plugin/test_handover.py::test_a_read_check_has_pytest_set_up_its_stretch_alone",)),
    "hand-over-gives-peers-the-traffic": M(
        "_segment hands a check's `peers` the layout's traffic, where the fixture gives its setup",
        "rmpeer/pytest_plugin/plugin.py", '    "peers": lambda layout: layout.setup,',
        '    "peers": lambda layout: layout.traffic,',
        ("tests/pytest_plugin/test_handover.py::test_every_check_is_handed_what_its_fixtures_give",)),
    "field-reads-i32-unsigned": M(
        "a struct's i32 fields read and write as unsigned: a negative value reads as 2**32 less it",
        "rmpeer/abi/structs.py", 'object.__setattr__(self, "_signed", self.type in _SIGNED)',
        'object.__setattr__(self, "_signed", False)',
        ("tests/abi/test_fields.py::test_each_field_reads_its_own_bytes",)),
    "field-scalar-written-at-zero": M(
        "a scalar field is written at the struct's start, not at its own offset",
        "rmpeer/abi/structs.py",
        '            buf[self.offset:self._end] = int(value).to_bytes(self._width, "little", signed=self._signed)',
        '            buf[0:self._width] = int(value).to_bytes(self._width, "little", signed=self._signed)',
        ("tests/abi/test_fields.py::test_each_field_writes_its_own_bytes",)),
    "pairs-run-the-first-pair-alone": M(
        "an item of --rm-pairs-per-item runs its first pair only: the layout's other checks are never made",
        "rmpeer/pytest_plugin/pairs.py", "    for pair in pairs:\n", "    for pair in pairs[:1]:\n",
        ("tests/pytest_plugin/test_pairs.py::test_every_check_is_logged_as_in_the_plain_run[passing]",)),
    "pairs-share-the-items-stretch": M(
        "each pair of an item of --rm-pairs-per-item begins the item's stretch, not its own: a replay no "
        "longer lines its calls up with the recording's",
        "rmpeer/pytest_plugin/pairs.py", 'item_segment_key(item, "test", pair)', 'item_segment_key(item, "test")',
        ("tests/pytest_plugin/test_pairs.py::test_every_check_is_logged_as_in_the_plain_run[passing]",)),
    "pairs-setup-error-counted-once": M(
        "an item of pairs whose set-up failed (the host never opened) logs the error for its first pair only: "
        "its other checks vanish from the result",
        "rmpeer/pytest_plugin/pairs.py", "        for pair in item.stash[PAIRS]:\n",
        "        for pair in item.stash[PAIRS][:1]:\n",
        ("tests/pytest_plugin/test_pairs.py::test_every_check_is_logged_as_in_the_plain_run[refused-open]",)),
    "pairs-failing-pair-ends-the-item": M(
        "a pair whose check fails ends its item: the layout's later pairs are never checked",
        "rmpeer/pytest_plugin/pairs.py", "        failure = exc\n", "        raise\n",
        ("tests/pytest_plugin/test_pairs.py::test_every_check_is_logged_as_in_the_plain_run[wrong-memory]",)),
    "pairs-cut-pair-logged-passed": M(
        "a pair cut by a stop signal is logged as a check that passed",
        "rmpeer/pytest_plugin/pairs.py", "        try:\n            run.shim.end_segment(abandoned=True)\n",
        '        _log_outcome(item, pair, "call", None, start, began)\n'
        "        try:\n            run.shim.end_segment(abandoned=True)\n",
        ("tests/pytest_plugin/test_pairs.py::test_a_signal_between_pairs_ends_the_run_with_the_pairs_before_it",)),
    "pairs-logged-inside-the-capture": M(
        "a pair's report is logged inside the item's captured call: a plain pytest run's terminal never shows "
        "the pairs' lines",
        "rmpeer/pytest_plugin/pairs.py",
        '    capture = item.config.pluginmanager.getplugin("capturemanager")',
        "    capture = None",
        ("tests/pytest_plugin/test_pairs.py::test_the_terminal_shows_each_pair_as_the_plain_run_does[passing]",)),
    "pairs-progress-counts-items": M(
        "the terminal's progress counts items, not checks: a plain run with --rm-pairs-per-item reads 314%",
        "rmpeer/pytest_plugin/pairs.py",
        "    session.testscollected = sum(len(item.stash.get(PAIRS, ())) or 1 for item in session.items)",
        "    pass",
        ("tests/pytest_plugin/test_pairs.py::test_the_terminal_shows_each_pair_as_the_plain_run_does[passing]",)),
    "pairs-stop-replaced-by-its-stretchs-end": M(
        "what a cut pair's stretch's end raises takes the stop signal's place: the run goes on past the signal",
        "rmpeer/pytest_plugin/pairs.py",
        "        except Exception:   # noqa: BLE001 - the stop's consequence, said by the INCOMPLETE verdict\n"
        "            pass\n",
        "        finally:\n            pass\n",
        ("tests/system/test_never_drain.py::test_a_signal_inside_a_pair_ends_the_run_whatever_its_stretchs_end_raises",)),
    "pairs-beside-xdist": M(
        "--rm-pairs-per-item runs beside pytest-xdist: every pair's report fails inside the worker",
        "rmpeer/pytest_plugin/pairs.py",
        '    if config.getoption("numprocesses", None) or hasattr(config, "workerinput"):',
        "    if False:",
        ("tests/pytest_plugin/test_pairs.py::test_what_counts_items_is_refused_beside_it[xdist]",)),
    "certify-one-item-per-pair": M(
        "certify runs one pytest item per pair again: pytest's machinery per check, not per layout",
        "rmpeer/cli/certify.py", '"-m", "hardware", "--rm-pairs-per-item", ', '"-m", "hardware", ',
        ("tests/cli/test_certify_items.py::test_certify_runs_a_layouts_pairs_as_one_item",)),
    "checks-share-the-first-ones-name": M(
        "the checks of one test function share the first one's whole location, its name too: every check "
        "reported as the first",
        "rmpeer/pytest_plugin/plugin.py", '            item.__dict__["location"] = (path, line, item.getmodpath())',
        '            item.__dict__["location"] = known',
        ("tests/pytest_plugin/test_handover.py::test_each_checks_location_is_the_one_pytest_computes",)),
    "open-loads-after-rm": M(
        "the host's open loads what the run needs next after RM's open, where nvidia-smi's idle reading is "
        "waited for next: the imports follow the wait instead of filling it",
        "rmpeer/run/hostrun.py",
        "            if load is not None:\n                load()\n            try:\n                self.runtime.open()\n",
        "            try:\n                self.runtime.open()\n                if load is not None:\n                    load()\n",
        ("tests/run/test_hostrun.py::test_the_open_loads_what_it_is_given_before_rms_open_and_the_idle_reading",)),
    "patterns-never-made-ahead": M(
        "the host's open plans no patterns: each is made, pages and all, when the run first compares against it",
        "rmpeer/run/hostrun.py", "                ahead(run_keys(self.spec.pattern_seed, self.spec.cases))",
        "                run_keys(self.spec.pattern_seed, self.spec.cases)",
        ("tests/traffic/test_patterns_ahead.py::test_the_hosts_open_plans_the_runs_patterns_before_rms_open",)),
    "patterns-thread-failure-escapes": M(
        "the patterns' thread lets its failure escape: Python prints a traceback in the middle of a run",
        "rmpeer/traffic/patterns.py",
        "                except Exception:   # noqa: BLE001 - no memory, most likely: the run makes the rest as it asks",
        "                except ZeroDivisionError:",
        ("tests/traffic/test_patterns_ahead.py::"
         "test_a_pattern_its_thread_could_not_make_is_made_by_the_run_without_a_traceback",)),
    "patterns-ahead-claim-nothing": M(
        "a planned pattern is not claimed by its first maker: the run and the thread both make it",
        "rmpeer/traffic/patterns.py", "            if key in self._claimed:", "            if False:",
        ("tests/traffic/test_patterns_ahead.py::test_the_run_waits_for_a_pattern_its_thread_is_making_and_never_makes_it_again",
         "tests/traffic/test_patterns_ahead.py::test_a_pattern_asked_before_its_thread_reaches_it_is_made_by_the_asker_once")),
    "patterns-ahead-not-waited-for": M(
        "the run does not wait for a pattern its thread is making: it makes the pattern again",
        "rmpeer/traffic/patterns.py", "            done.wait()\n        return self._words.get(key)",
        "            pass\n        return self._words.get(key)",
        ("tests/traffic/test_patterns_ahead.py::test_the_run_waits_for_a_pattern_its_thread_is_making_and_never_makes_it_again",)),
    "count-up-drops-the-last-partial-chunk": M(
        "count_up never writes a block's last partial chunk: those words keep what was there",
        "rmpeer/machine/slices.py", "    if tail < hi:\n", "    if False:\n",
        ("tests/machine/test_slices_mutants.py::test_count_up_writes_every_word_first_plus_its_index",)),
    "count-up-slices-from-the-start": M(
        "count_up's threads count each slice from the block's start, not from after its first chunk",
        "rmpeer/machine/slices.py",
        "        each(lambda at, k: _from_head(out, head.size + at, head.size + at + k), left, SLICE // 8)",
        "        each(lambda at, k: _from_head(out, at, at + k), left, SLICE // 8)",
        ("tests/machine/test_slices_mutants.py::test_count_up_wraps_past_2_64_across_slices_and_chunks",)),
    "count-up-rows-from-zero": M(
        "count_up's whole chunks are counted from the block's start, not from where they lie",
        "rmpeer/machine/slices.py", "        starts = np.arange(lo, lo + whole * CHUNK, CHUNK, dtype=np.uint64)",
        "        starts = np.arange(0, whole * CHUNK, CHUNK, dtype=np.uint64)",
        ("tests/machine/test_slices_mutants.py::test_count_up_writes_every_word_first_plus_its_index",)),
    "counting-words-writable": M(
        "the counting words under every count_up can be written: one slip spoils every later pattern",
        "rmpeer/machine/slices.py", "        _COUNTING.flags.writeable = False\n", "",
        ("tests/machine/test_slices_mutants.py::test_the_counting_words_are_read_only",)),
    "cached-ignores-the-plan": M(
        "cached() never looks at the patterns made ahead: the run makes each one again",
        "rmpeer/traffic/patterns.py",
        "    planned = _AHEAD.take((pattern_seed, kind, owner, length)) if _AHEAD is not None else None",
        "    planned = None",
        ("tests/traffic/test_patterns_ahead.py::test_the_planned_patterns_are_made_on_their_own_thread_with_the_seeds_words",)),
    "compose-keeps-one-word-per-group": M(
        "compose keys the words it keeps by nothing: every word of a group is the first one composed",
        "rmpeer/abi/bitfields.py", "        key = tuple(fields.items())", "        key = ()",
        ("tests/abi/test_abi.py::test_a_word_composed_again_is_the_same_and_a_bad_one_is_refused_each_time",
         "tests/shim/test_replay.py::test_the_unchanged_replay_passes")),
    "certify-lets-a-check-print": M(
        "what a check prints reaches certify's stdout (the detection checks' findings before --json's line)",
        "rmpeer/cli/certify.py", '        with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):',
        '        with open(os.devnull, "w") as sink:',
        ("tests/system/test_never_drain.py::test_a_check_that_could_not_run_is_named[named]",)),
    "refuse-unknown-loads-difflib-always": M(
        "a matrix's key check loads difflib at every call, not only for the key it refuses",
        "rmpeer/tables/load.py", "def refuse_unknown(path, where, mapping, known) -> None:\n",
        "def refuse_unknown(path, where, mapping, known) -> None:\n    import difflib  # noqa: F401\n",
        ("tests/system/test_heavy_imports.py::test_a_passive_certify_that_ends_well_loads_nothing_it_never_uses",
         "tests/system/test_heavy_imports.py::test_a_quick_certify_loads_neither_difflib_nor_pdb")),
    "certify-keeps-pytest-debugging": M(
        "certify's session keeps pytest's debugging plugin, whose set-up imports pdb",
        "rmpeer/cli/certify.py", '"stepwise", "subtests", "debugging")', '"stepwise", "subtests")',
        ("tests/system/test_heavy_imports.py::test_a_quick_certify_loads_neither_difflib_nor_pdb",)),
    "slices-import-their-pool-at-load": M(
        "the slices' module imports concurrent.futures (and logging) when loaded, a passive run too",
        "rmpeer/machine/slices.py", "from __future__ import annotations\n",
        "from __future__ import annotations\n\nimport concurrent.futures  # noqa: F401\n",
        ("tests/system/test_heavy_imports.py::test_a_passive_certify_that_ends_well_loads_nothing_it_never_uses",)),
    "passive-loads-the-host-run": M(
        "run.execute imports the quick and full tiers' host run when loaded: a passive run loads the layouts, "
        "copy engines and traffic it never uses",
        "rmpeer/run/execute.py", "from rmpeer.run.passive import observe, remember_kmsg_position\n",
        "from rmpeer.run.hostrun import HostRun  # noqa: F401\nfrom rmpeer.run.passive import observe, remember_kmsg_position\n",
        ("tests/system/test_heavy_imports.py::test_a_passive_certify_that_ends_well_loads_nothing_it_never_uses",)),
    "passive-starts-its-clocks-after-rms-open": M(
        "a passive run starts its clocks' reader after RM's open: NVML's start follows the open instead of "
        "running beside it",
        "rmpeer/run/passive.py", "    early = None if target.is_replay else start_clocks()\n    try:\n"
        "        return _read(target, last, record, abi, select, early)\n",
        "    early = None\n    try:\n        return _read(target, last, record, abi, select, early)\n",
        ("tests/run/test_passive.py::test_the_clocks_reader_starts_before_rms_open_and_is_always_closed",)),
    "passive-leaves-nvml-open": M(
        "a passive run never ends NVML in its process",
        "rmpeer/run/passive.py", "            early.close()         # NVML ended", "            pass  # NVML ended",
        ("tests/run/test_passive.py::test_the_clocks_reader_starts_before_rms_open_and_is_always_closed",)),
    "nvml-reads-the-graphics-clock-by-the-memory-type": M(
        "NVML's graphics clock is asked by the memory clock's type",
        "rmpeer/machine/nvml.py", '                   for clock in ("graphics_mhz", "sm_mhz", "memory_mhz")}',
        '                   for clock in ("memory_mhz", "sm_mhz", "memory_mhz")}',
        ("tests/machine/test_nvml_in_process.py::test_a_card_read_in_this_process_reads_as_nvidia_smi_reads_it",)),
    "nvml-tries-the-newer-event-call-alone": M(
        "the clock-event reasons are asked by the newer driver's call name alone: an older driver's are never read",
        "rmpeer/machine/nvml.py", '        for name in table["event_reasons"]:', '        for name in table["event_reasons"][:1]:',
        ("tests/machine/test_nvml_in_process.py::test_a_driver_with_the_older_name_of_the_event_reasons_call_is_read_by_it",)),
    "nvml-never-shut-down": M(
        "close() leaves NVML started in the process",
        "rmpeer/machine/nvml.py", "            self.lib.nvmlShutdown()", "            pass",
        ("tests/machine/test_nvml_in_process.py::test_close_ends_nvml_once_and_nothing_is_read_after_it",)),
    "clocks-always-through-nvidia-smi": M(
        "every clock reading asks nvidia-smi, NVML in this process never read",
        "rmpeer/run/fitness.py", "    reading = source.read(pcis) if source is not None else None",
        "    reading = None",
        ("tests/machine/test_nvml_in_process.py::test_the_run_reads_through_nvml_in_this_process_and_asks_no_nvidia_smi",)),
    "clocks-keep-nvmls-reading-missing-a-card": M(
        "a reading through NVML here that misses one of the run's cards is kept: that card's MHz read as unknown",
        "rmpeer/run/fitness.py", '    if reading is not None and "reason" not in reading:', "    if reading is not None:",
        ("tests/machine/test_nvml_in_process.py::test_a_card_nvml_here_does_not_know_is_read_through_nvidia_smi",)),
    "certificate-says-not-why-nvml-was-not-read": M(
        "a certificate's clock reading taken through nvidia-smi leaves out why NVML was not read here",
        "rmpeer/run/fitness.py", '            if nvml.get("library_reason"):', "            if False:",
        ("tests/machine/test_nvml_in_process.py::test_a_certificates_reading_says_where_its_mhz_came_from_and_why",)),
    "certificate-calls-every-reading-nvml-in-process": M(
        "a certificate's clock reading says NVML in this process whatever read it",
        "rmpeer/run/fitness.py", '"mhz_source": "NVML" if nvml.get("source") == SOURCE else "NVML (nvidia-smi)",',
        '"mhz_source": "NVML",',
        ("tests/machine/test_nvml_in_process.py::test_a_certificates_reading_says_where_its_mhz_came_from_and_why",)),
    "smi-cancel-waits-for-its-pipes": M("an nvidia-smi reading cancelled at a signal waits until its pipes close",
        "rmpeer/run/fitness.py", "            self.proc.wait()", "            self.proc.communicate()",
        ("tests/run/test_nvml_clocks.py::test_a_started_reading_never_read_is_ended",)),
    "fleet-files-folders-unchecked": M(
        "fleet files checks the files' names alone: a link at a sub-folder named after a hook stops the copy half-installed",
        "rmpeer/fleet/files.py", '        writable("fleet files DIR", folder, folder=True)\n', "        pass\n",
        ("tests/fleet/test_files_mutants.py::test_a_link_at_a_sub_folder_named_after_a_file_refuses_the_copy_before_that_file",)),
    "set-rows-beyond-by-the-rounded-change": M(
        "a set's bandwidth row counts a host beyond the tolerance by its change rounded to four places",
        "rmpeer/diff/sets.py", '"beyond": sum(abs(c) > tolerance for c in changes)',
        '"beyond": sum(abs(m["change"]) > tolerance for m in moved)',
        ("tests/diff/test_sets_mutants.py::test_a_move_past_the_tolerance_by_less_than_the_places_shown_is_beyond_it",)),
    "fleet-checks-fingerprint-cards-as-written": M(
        "collect reads a certificate's fingerprint cards as written: a number there, or a UUID that is a list, stops the collection",
        "rmpeer/fleet/checks.py",
        '    if not isinstance(cards, list):\n        return set()\n'
        '    return {c["uuid"] for c in cards if isinstance(c, dict) and isinstance(c.get("uuid"), str) and c["uuid"]}\n',
        '    return {c.get("uuid") for c in cards if isinstance(c, dict) and c.get("uuid")}\n',
        ("tests/fleet/test_checks_mutants.py::test_a_planted_fingerprint_never_stops_the_collection",)),
} | {
    f"replay-{op}-unchecked": M(f"a replay accepts {what} than the recording's", "rmpeer/shim/replay.py",
                                anchor, "        if False:",
                                (f"tests/shim/test_shim.py::test_a_replay_refuses_a_call_that_differs_from_the_recording[{op}]",))
    for op, what, anchor in (
        ("open", "an open of another path", "        if rec.path != path:"),
        ("mmap", "an mmap of another length", '        if rec.extra.get("length") != length:'),
        ("wait", "a wait for another value", '        if rec.extra.get("want") != value:'),
        ("view", "a read-back of another length", '        if rec.extra.get("length") != n:'),
        ("write", "a CPU access at another offset", '        if rec.extra.get("offset") != offset:'))
}


def names_in(node_id: str) -> tuple[Path, str]:
    file, _, test = node_id.partition("::")
    return CHECKOUT / file, test.split("[")[0]


def _tracked_files(root: Path) -> list[str]:
    """The checkout's files as git sees them (tracked, and new ones not ignored); a tree
    without git: every file but caches, venvs and reports."""
    try:
        done = subprocess.run(["git", "-C", str(root), "ls-files", "-co", "--exclude-standard", "-z"],
                              capture_output=True, check=True)
        return [p for p in done.stdout.decode().split("\0") if p and (root / p).is_file()]
    except (OSError, subprocess.CalledProcessError):
        skip = {".git", ".venv", ".ci-venv", "__pycache__", "reports", ".allure", "node_modules", "build"}
        return [str(p.relative_to(root)) for p in root.rglob("*")
                if p.is_file() and not skip & set(p.relative_to(root).parts)]


def planted(name: str, dest: Path) -> Path:
    """A copy of the checkout at `dest` with mutant `name` applied to its file."""
    m = MUTANTS[name]
    for rel in _tracked_files(CHECKOUT):
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(CHECKOUT / rel, dest / rel)
    target = dest / m.path
    text = target.read_text()
    change = m.change(text)
    if change is None:
        raise SystemExit(f"mutant {name}: its anchor is not in {m.path} exactly once")
    target.write_text(text.replace(*change))
    return dest


def run(name: str, *, quiet: bool = False) -> tuple[bool, str]:
    """(killed, the tests' output): the mutant's killers run against a mutated copy."""
    with tempfile.TemporaryDirectory(prefix=f"rmpeer-mutant-{name}-") as tmp:
        root = planted(name, Path(tmp))
        env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
        env["PYTHONPATH"] = os.pathsep.join([str(root), str(root / "tests"), env.get("PYTHONPATH", "")])
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                               "--import-mode=prepend", "-o", "addopts=", *MUTANTS[name].kills],
                              cwd=root, env=env, capture_output=True, text=True, timeout=1200)
    out = done.stdout + done.stderr
    # exit 1: a test failed (killed); 0: all passed (survived); else the run itself broke
    if done.returncode not in (0, 1):
        raise SystemExit(f"mutant {name}: the killing tests did not run (pytest exit {done.returncode}):\n"
                         f"{out[-3000:]}")
    return done.returncode == 1, out


def main(argv=None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["--list"]:
        for name, m in MUTANTS.items():
            print(f"{name}: {m.bug} ({m.path}); killed by {', '.join(m.kills)}")
        return 0
    unknown = [a for a in args if a not in MUTANTS]
    if unknown:
        print(f"no such mutant: {', '.join(unknown)} (see --list)", file=sys.stderr)
        return 2
    survived = []
    for name in args or list(MUTANTS):
        t0 = time.monotonic()
        killed, out = run(name)
        last = [line for line in out.splitlines() if line.startswith(("FAILED", "ERROR"))][:1]
        print(f"{'KILLED' if killed else 'SURVIVED'} {name} ({time.monotonic() - t0:.1f} s): {MUTANTS[name].bug}"
              + (f"\n    {last[0]}" if last else ""), flush=True)
        if not killed:
            survived.append(name)
    print(f"{len(survived)} of {len(args or MUTANTS)} survived" + (f": {', '.join(survived)}" if survived else ""))
    return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main())
