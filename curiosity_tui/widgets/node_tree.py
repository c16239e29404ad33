"""The ledger's node tree, by parent, loaded lazily.

Only what is visible is built: a node's children are added when it is expanded, and then in
chunks of :attr:`LedgerTree.CHUNK` with a "… N more" leaf that loads the next chunk when
selected. A 10,000-node ledger therefore opens with a few dozen tree nodes.

Labels are built as ``Text`` (never parsed as markup): change tag, status glyph, id, status
word, pulse, queue rank, curator priority and the first line of the question.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from curiosity_tui.ledger.node_record import pulse
from curiosity_tui.ledger.view import State
from curiosity_tui.widgets.literal import short
from curiosity_tui.widgets.status import CHANGE_TAG, STATUS_STYLE, glyph


@dataclass(frozen=True)
class More:
    """Placeholder leaf: the children of ``parent`` from ``start`` on are not loaded yet."""

    parent: str | None
    start: int


TreeData = str | More

#: the tree's filters, in the order ``f`` cycles through them ("" shows every node)
TREE_FILTERS: tuple[str, ...] = ("", "open", "dormant", "closed", "archived", "merged", "NEW/CHG")
#: a filtered tree lists at most this many matches (the status line says how many there are)
FILTER_LIMIT = 2000


def filter_matches(state: State, which: str) -> list[str]:
    """The node ids ``which`` keeps, in id order: a status, or "NEW/CHG" (changed here)."""
    from curiosity_tui.ledger.view import node_num

    if which == "NEW/CHG":
        keep = [nid for nid in state.nodes if nid in state.changed]
    else:
        keep = [nid for nid, n in state.nodes.items() if n["status"] == which]
    return sorted(keep, key=node_num)


def node_label(state: State, nid: str, width: int = 90) -> Text:
    n = state.nodes[nid]
    status = n["status"]
    t = Text(no_wrap=True, end="")
    tag = CHANGE_TAG.get(state.changed.get(nid, ""))
    if tag:
        t.append(tag[0], style=tag[1])
        t.append(" ")
    t.append(glyph(status) + " ", style=STATUS_STYLE.get(status, ""))
    t.append(nid, style="bold")
    t.append(" ")
    t.append(f"{status:<8}", style=STATUS_STYLE.get(status, ""))
    t.append(f" p{pulse(n)}", style="cyan")
    rank = state.ranks.get(nid)
    if rank is not None:
        t.append(f" #{rank}", style="bold cyan")
    if n.get("curator_priority") is not None:
        t.append(f" ★{n['curator_priority']}", style="bold magenta")
    t.append("  ")
    t.append(short(n["text"], width))
    return t


class LedgerTree(Tree[TreeData]):
    """A lazily built tree over a :class:`~curiosity_tui.ledger.view.State`."""

    CHUNK = 200

    BINDINGS = [
        Binding("right,l", "expand_node", "Expand", show=False, id="tree.expand"),
        Binding("left,h", "collapse_node", "Collapse", show=False, id="tree.collapse"),
        Binding("j", "cursor_down", "Down", show=False, id="tree.down"),
        Binding("k", "cursor_up", "Up", show=False, id="tree.up"),
        Binding("e", "expand_all", "Expand all", show=False, id="tree.expand_all"),
    ]
    #: expand-all stops after this many nodes (a 10k-node ledger stays responsive)
    EXPAND_ALL_LIMIT = 2000

    class NodeFocused(Message):
        """The cursor is on ledger node ``node_id``."""

        def __init__(self, node_id: str | None) -> None:
            super().__init__()
            self.node_id = node_id

    def __init__(self, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(Text("ledger"), **kwargs)
        self.show_root = False
        self.guide_depth = 3
        self.state: State | None = None
        self._tnodes: dict[str, TreeNode[TreeData]] = {}
        self._loaded: dict[str | None, int] = {}  # parent -> how many children are loaded
        #: one of :data:`TREE_FILTERS`; a filtered tree is a flat list of the matching nodes
        self.node_filter = ""

    # -- building ---------------------------------------------------------------
    def show_state(self, state: State, cursor: str | None = None) -> None:
        """Replace the tree with ``state``; keep the cursor on ``cursor`` when it exists."""
        self.state = state
        self.clear()
        self._tnodes = {}
        self._loaded = {}
        self.root.expand()
        if self.node_filter:
            self._show_filtered(state, cursor)
            return
        self._load_children(self.root, None)
        roots = state.roots()
        # open the first root so the seed's children show at once
        if roots and roots[0] in self._tnodes:
            first = self._tnodes[roots[0]]
            self._load_children(first, roots[0])
            first.expand()
        target = cursor if cursor in state.nodes else (roots[0] if roots else None)
        if target is not None:
            self.reveal(target)

    def _show_filtered(self, state: State, cursor: str | None) -> None:
        matches = filter_matches(state, self.node_filter)
        for nid in matches[:FILTER_LIMIT]:
            self._tnodes[nid] = self.root.add_leaf(self._label(nid), data=nid)
        if not matches:
            self.root.add_leaf(
                Text(f"no {self.node_filter} node at this point (f: next filter)", style="dim")
            )
        _ = self.last_line
        if cursor in self._tnodes:
            self.move_cursor(self._tnodes[cursor])
        elif matches:
            self.move_cursor(self._tnodes[matches[0]])

    def _label(self, nid: str) -> Text:
        assert self.state is not None
        return node_label(self.state, nid)

    def _load_children(self, tnode: TreeNode[TreeData], parent: str | None) -> None:
        """Load the next chunk of ``parent``'s children under ``tnode`` (idempotent at the end)."""
        assert self.state is not None
        kids = self.state.children.get(parent, [])
        start = self._loaded.get(parent, 0)
        if start and start >= len(kids):
            return
        for child in list(tnode.children):  # drop a previous "more" leaf
            if isinstance(child.data, More):
                child.remove()
        end = min(len(kids), start + self.CHUNK)
        for cid in kids[start:end]:
            has_kids = bool(self.state.children.get(cid))
            self._tnodes[cid] = tnode.add(self._label(cid), data=cid, allow_expand=has_kids)
        self._loaded[parent] = end
        if end < len(kids):
            tnode.add_leaf(
                Text(
                    f"… {len(kids) - end} more (Enter loads {min(self.CHUNK, len(kids) - end)})",
                    style="italic dim",
                ),
                data=More(parent, end),
            )

    def reveal(self, nid: str) -> bool:
        """Expand the path to ``nid``, load the chunk holding it, and put the cursor on it."""
        if self.state is None or nid not in self.state.nodes:
            return False
        if self.node_filter:
            if nid not in self._tnodes:
                self.node_filter = ""  # the node is filtered out: show the whole tree again
                self.show_state(self.state)
            else:
                _ = self.last_line
                self.move_cursor(self._tnodes[nid])
                self.scroll_to_node(self._tnodes[nid], animate=False)
                return True
        path = self.state.path_to(nid)
        parent_t: TreeNode[TreeData] = self.root
        parent_id: str | None = None
        for pid in path:
            kids = self.state.children.get(parent_id, [])
            idx = kids.index(pid) if pid in kids else 0
            while pid not in self._tnodes and self._loaded.get(parent_id, 0) <= idx:
                before = self._loaded.get(parent_id, 0)
                self._load_children(parent_t, parent_id)
                if self._loaded.get(parent_id, 0) == before:
                    break
            if pid not in self._tnodes:
                return False
            tn = self._tnodes[pid]
            if pid != nid:
                if pid not in self._loaded:
                    self._load_children(tn, pid)
                tn.expand()
            parent_t, parent_id = tn, pid
        _ = self.last_line  # rebuild line numbers before moving
        self.move_cursor(self._tnodes[nid])
        self.scroll_to_node(self._tnodes[nid], animate=False)
        return True

    @property
    def current_id(self) -> str | None:
        node = self.cursor_node
        if node is None or not isinstance(node.data, str):
            return None
        return node.data

    # -- events -----------------------------------------------------------------
    def on_tree_node_expanded(self, event: Tree.NodeExpanded[TreeData]) -> None:
        data = event.node.data
        if isinstance(data, str) and data not in self._loaded:
            self._load_children(event.node, data)

    def on_tree_node_selected(self, event: Tree.NodeSelected[TreeData]) -> None:
        data = event.node.data
        if isinstance(data, More):
            event.stop()
            parent = event.node.parent or self.root
            self._load_children(parent, data.parent)
            _ = self.last_line

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted[TreeData]) -> None:
        data = event.node.data
        self.post_message(self.NodeFocused(data if isinstance(data, str) else None))

    def render_label(self, node: TreeNode[TreeData], base_style: Style, style: Style) -> Text:
        """The label, cut with an ellipsis where the pane ends (it was cut mid-word)."""
        label = super().render_label(node, base_style, style)
        depth, up = 0, node.parent
        while up is not None and up is not self.root:
            depth, up = depth + 1, up.parent
        room = self.scrollable_content_region.width - (depth + 1) * self.guide_depth
        if room >= 12 and label.cell_len > room:
            label.truncate(room, overflow="ellipsis")
        return label

    # -- actions ----------------------------------------------------------------
    def action_expand_all(self) -> None:
        """Load and expand every node under the cursor's root, up to EXPAND_ALL_LIMIT."""
        todo = list(self.root.children)
        done = 0
        while todo and done < self.EXPAND_ALL_LIMIT:
            tnode = todo.pop(0)
            if isinstance(tnode.data, str) and tnode.allow_expand:
                self._load_children(tnode, tnode.data)
                tnode.expand()
                done += 1
                todo.extend(tnode.children)
        if todo:
            self.notify(f"Expanded {done} nodes; the rest stay folded (Enter or → opens one).")

    def action_expand_node(self) -> None:
        node = self.cursor_node
        if node is not None and node.allow_expand and not node.is_expanded:
            node.expand()

    def action_collapse_node(self) -> None:
        node = self.cursor_node
        if node is None:
            return
        if node.is_expanded:
            node.collapse()
        elif node.parent is not None and node.parent is not self.root:
            _ = self.last_line
            self.move_cursor(node.parent)
