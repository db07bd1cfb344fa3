from tinygrad.renderer import Renderer


class NIRRenderer(Renderer):
  """tinygrad's Mesa NIR renderer; tinygrad-cpp has none, so isinstance checks are false."""
