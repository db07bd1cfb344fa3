"""tinygrad.renderer: the renderer classes tests compare against (none of them is ours)."""


class Renderer:
  pass
