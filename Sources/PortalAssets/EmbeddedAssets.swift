/// `Templates/` and `Public/` as they were when the portal was built; the `EmbedAssets` build
/// plugin generates ``files`` (path relative to the package root -> base64 content).
package enum EmbeddedAssets {}
