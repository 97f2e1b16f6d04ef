// The emission profile I(ω)/Φ of a virtual point light towards a direction at cosine cosI from
// its axis: a Lambertian surface cosθi/π, an isotropic point 1/(4π), a spot its cone profile
// normalised over the sphere. The same formulas as rays::vplIntensity (src/rays/vpl.cpp).

const float kVplPi = 3.14159265358979;
const int kVplLambertianSurface = 0;
const int kVplIsotropicPoint = 1;
const int kVplSpot = 2;

// spotCos: cosines of the inner and outer cone half-angles. Full inside the inner cone, smoothstep
// down to zero at the outer cone; the profile integrates to 2π·[(1 − cosInner) + (cosInner − cosOuter)/2].
float vplSpotProfile(float cosTheta, vec2 spotCos) {
  float ramp = smoothstep(spotCos.y, spotCos.x, cosTheta);
  float integral = (1.0 - spotCos.x) + 0.5 * (spotCos.x - spotCos.y);
  return ramp / (2.0 * kVplPi * integral);
}

float vplEmissionProfile(int profile, float cosI, vec2 spotCos) {
  if (profile == kVplLambertianSurface) return max(cosI, 0.0) / kVplPi;
  if (profile == kVplIsotropicPoint) return 0.25 / kVplPi;
  return vplSpotProfile(cosI, spotCos);
}
