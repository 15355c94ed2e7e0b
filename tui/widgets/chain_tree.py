"""The chain pane: the spine in order, each branch folded under the spine step it leaves."""

from __future__ import annotations

from pathlib import PurePosixPath

from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from tracer.views.terminal import visible
from tui.kinds import WORD_WIDTH, look_of
from tui.outline import Branch, Outline

GUESS_MARK = "?"
LEAF_INDENT = "  "  # the width of the tree's fold arrow


class ChainTree(Tree[str]):
    """Nodes hold step ids (group nodes hold ""). Highlighting a node posts StepHighlighted."""

    BINDINGS = [
        Binding("up", "cursor_up", "Up", show=True),
        Binding("down", "cursor_down", "Down", show=True),
        Binding("enter", "app.follow", "Follow edge", show=True),
        Binding("space", "toggle_node", "Fold", show=True),
    ]

    class StepHighlighted(Message):
        def __init__(self, step_id: str) -> None:
            super().__init__()
            self.step_id = step_id

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("chain", id=id)
        self.show_root = False
        self.auto_expand = False
        self.nodes_by_step: dict[str, TreeNode[str]] = {}

    def show_outline(self, view: Outline) -> None:
        """Replace the tree with VIEW: spine steps expanded at the top level, branches folded."""
        self.clear()
        self.nodes_by_step = {}
        for branch in view.spine:
            self.add_branch(self.root, branch, view)
        for number, shared, steps in view.other_routes():
            if not steps:
                continue
            end = view.step(steps[-1])
            title = visible(f"route {number} to {PurePosixPath(end.file).name}:{end.line}")
            title += f", leaving the spine after step {shared}" if shared else ""
            group = self.root.add(Text(title, style="italic"), data="", expand=False)
            for position, step_id in enumerate(steps, shared + 1):
                label = Text(f"{position:>2} ", style="bold") + step_label(
                    view, Branch(step_id, None, ()), numbered=False
                )
                node = group.add_leaf(Text(LEAF_INDENT) + label, data=step_id)
                self.nodes_by_step.setdefault(step_id, node)
        if view.loose:
            group = self.root.add(
                Text(
                    visible(f"other places {view.param} is bound ({len(view.loose)})"),
                    style="italic",
                ),
                data="",
            )
            for branch in view.loose:
                self.add_branch(group, branch, view)
        self.root.expand()

    def add_branch(self, parent: TreeNode[str], branch: Branch, view: Outline) -> None:
        label = step_label(view, branch)
        if branch.children:
            node = parent.add(label, data=branch.step_id, expand=False)
            for child in branch.children:
                self.add_branch(node, child, view)
        else:  # in line with the siblings that have a fold arrow
            node = parent.add_leaf(Text(LEAF_INDENT) + label, data=branch.step_id)
        self.nodes_by_step.setdefault(branch.step_id, node)

    def select_step(self, step_id: str) -> bool:
        """Move the cursor to STEP_ID, unfolding the branches above it."""
        node = self.nodes_by_step.get(step_id)
        if node is None:
            return False
        ancestor = node.parent
        while ancestor is not None:
            ancestor.expand()
            ancestor = ancestor.parent
        # The tree lays out its lines again after unfolding; move once it has.
        self.call_after_refresh(self.move_cursor, node)
        return True

    @property
    def step_id(self) -> str | None:
        node = self.cursor_node
        return node.data if node is not None and node.data else None

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted[str]) -> None:
        if event.node.data:
            self.post_message(self.StepHighlighted(event.node.data))


def step_label(view: Outline, branch: Branch, numbered: bool = True) -> Text:
    """`3 → arg    tp_worker.py:77  TpModelWorker.__init__`, guessed steps marked. The place
    comes before the function: where the pane is too narrow, the function's name is cut."""
    step = view.step(branch.step_id)
    kind = view.kind_of(step.id)
    look = look_of(kind)
    label = Text(no_wrap=True, overflow="ellipsis")
    number = view.spine_number(step.id) if numbered else None
    if number is not None:
        label.append(f"{number:>2} ", style="bold")
    elif branch.via is not None:
        label.append("↓ " if branch.via.src != step.id else "↑ ", style="dim")
    label.append(f"{look.glyph} {look.word:<{WORD_WIDTH}} ", style=look.colour)
    label.append(visible(f"{PurePosixPath(step.file).name}:{step.line}"))
    if view.is_guess(step.id):
        label.append(f" {GUESS_MARK}{view.confidence(step.id):.1f}", style="italic red")
    label.append("  ")
    label.append(visible(step.symbol or "<module>"), style="dim")
    return label
