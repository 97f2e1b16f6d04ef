#version 450 core
// The viewer's present pass: one triangle that covers the viewport (vertices from gl_VertexID,
// no vertex buffer).

void main() {
  const vec2 corner = vec2((gl_VertexID << 1) & 2, gl_VertexID & 2);  // (0,0), (2,0), (0,2)
  gl_Position = vec4(2.0 * corner - 1.0, 0.0, 1.0);
}
